internal import Clibgit2
import Glibc

extension GitTree {
  /// The folder tree at `path`, or nil if there is none.
  package func subtree(at path: String, repository: GitRepository) throws -> GitTree? {
    var entry: OpaquePointer?
    guard git_tree_entry_bypath(&entry, handle, path) == 0, let entry else { return nil }
    defer { git_tree_entry_free(entry) }
    guard git_tree_entry_type(entry) == GIT_OBJECT_TREE else { return nil }
    return try repository.tree(GitOID(git_tree_entry_id(entry).pointee))
  }

  /// The raw content of a folder's tree object: `folder`'s entries (nil for
  /// a new folder) with `count` blobs added or replaced, given by name in
  /// byte order by `entry(i)`.
  ///
  /// Written straight into one buffer, merging in order: libgit2's tree
  /// builder would hold a map entry and a copied name for each of 300k
  /// files. Git orders a tree by name, comparing a folder's name as if it
  /// ended in "/".
  package static func mergedBytes(
    _ folder: GitTree?, adding count: Int, _ entry: (Int) -> (name: String, id: UnsafeRawBufferPointer)
  ) -> [UInt8] {
    merged(folder, count: count, storedModes: false) { j in
      let new = entry(j)
      return (new.name, 0o100644, new.id)
    }.bytes
  }

  /// The raw content of `folder`'s tree (none for nil) with the folders
  /// in `subfolders` (sorted by name) added or replaced: a hashed or
  /// nested table's folder after an import filled its folders.
  package static func mergedBytes(_ folder: GitTree?, subfolders: [(name: String, id: GitOID)]) -> [UInt8] {
    let ids = subfolders.flatMap(\.id.bytes)
    return ids.withUnsafeBytes { raw in
      merged(folder, count: subfolders.count, storedModes: false) { j in
        (subfolders[j].name, 0o040000, UnsafeRawBufferPointer(rebasing: raw[(j * 20)..<(j * 20 + 20)]))
      }.bytes
    }
  }

  /// The raw content of `folder`'s tree with `changes` applied (a file,
  /// executable or symlink set by name, or removed where the id is nil),
  /// as libgit2's tree builder writes it: entries in git's order, each
  /// existing one with its mode as stored. Nil when a change is not such a
  /// plain one (it names a folder or gitlink, replaces a folder, or removes
  /// a name that is not there), or the folder would end empty.
  static func rewrittenBytes(_ folder: GitTree, setting changes: [(name: String, id: GitOID?, mode: UInt32)])
    -> [UInt8]?
  {
    let plainModes: Set<UInt32> = [0o100644, 0o100755, 0o120000]
    var sorted = changes
    sorted.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    for (k, change) in sorted.enumerated() {
      if k > 0 && sorted[k - 1].name == change.name { return nil }
      guard change.mode != 0o040000, plainModes.contains(change.mode) || change.id == nil else { return nil }
      let existing = change.name.withCString { git_tree_entry_byname(folder.handle, $0) }
      if let existing, git_tree_entry_type(existing) != GIT_OBJECT_BLOB { return nil }
      if change.id == nil && existing == nil { return nil }
      if change.name.isEmpty || change.name.utf8.contains(0) { return nil }
    }
    // The ids side by side, so that each change's can be lent as bytes.
    var ids: [UInt8] = []
    ids.reserveCapacity(sorted.count * 20)
    for change in sorted { ids += change.id?.bytes ?? Array(repeating: 0, count: 20) }
    let (bytes, written) = ids.withUnsafeBytes { ids in
      merged(folder, count: sorted.count, storedModes: true) { j in
        let change = sorted[j]
        return (
          change.name, change.mode,
          change.id == nil ? nil : UnsafeRawBufferPointer(rebasing: ids[(j * 20)..<(j * 20 + 20)])
        )
      }
    }
    return written == 0 ? nil : bytes
  }

  /// `folder`'s raw entries (none for nil) merged in git's order with
  /// `count` new ones given in byte order by `new(j)`: each sets the entry
  /// of its name, or removes it when its id is nil. Existing entries keep
  /// their mode as stored (`storedModes`, as libgit2's tree builder does)
  /// or as libgit2 normalizes it. Returns the bytes and how many entries
  /// they hold.
  private static func merged(
    _ folder: GitTree?, count: Int, storedModes: Bool,
    _ new: (Int) -> (name: String, mode: UInt32, id: UnsafeRawBufferPointer?)
  ) -> (bytes: [UInt8], entries: Int) {
    let existing = folder.map { git_tree_entrycount($0.handle) } ?? 0
    var bytes: [UInt8] = []
    bytes.reserveCapacity((existing + count) * 40)
    var written = 0
    var i = 0
    var j = 0
    while i < existing || j < count {
      let old = i < existing ? git_tree_entry_byindex(folder!.handle, i) : nil
      let oldName = old.map {
        UnsafeRawBufferPointer(start: git_tree_entry_name($0), count: strlen(git_tree_entry_name($0)))
      }
      if j < count {
        let change = new(j)
        var name = change.name
        let order = name.withUTF8 { name in
          old.map {
            compare(
              oldName!, isFolder: git_tree_entry_type($0) == GIT_OBJECT_TREE, UnsafeRawBufferPointer(name),
              newIsFolder: change.mode == 0o040000)
          } ?? 1
        }
        if order >= 0 {
          if let id = change.id {
            name.withUTF8 {
              appendEntry(to: &bytes, mode: change.mode, name: UnsafeRawBufferPointer($0), id: id)
            }
            written += 1
          }
          j += 1
          if order == 0 { i += 1 }  // replaced or removed
          continue
        }
      }
      guard let old, let oldName else { break }
      let mode =
        storedModes
        ? UInt32(git_tree_entry_filemode_raw(old).rawValue) : git_tree_entry_filemode(old).rawValue
      withUnsafeBytes(of: git_tree_entry_id(old).pointee.id) { id in
        appendEntry(to: &bytes, mode: mode, name: oldName, id: UnsafeRawBufferPointer(rebasing: id[0..<20]))
      }
      written += 1
      i += 1
    }
    return (bytes, written)
  }

  /// Appends one raw tree entry: the mode in octal, the name, the id.
  private static func appendEntry(
    to bytes: inout [UInt8], mode: UInt32, name: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer
  ) {
    bytes += String(mode, radix: 8).utf8
    bytes.append(UInt8(ascii: " "))
    bytes += name
    bytes.append(0)
    bytes += id
  }

  /// -1, 0 or 1 as the existing entry `old` sorts before, at or after the
  /// new entry named `new` (a folder when `newIsFolder`), in git's tree
  /// order.
  static func compare(
    _ old: UnsafeRawBufferPointer, isFolder: Bool, _ new: UnsafeRawBufferPointer, newIsFolder: Bool = false
  )
    -> Int
  {
    let n = min(old.count, new.count)
    for k in 0..<n where old[k] != new[k] { return old[k] < new[k] ? -1 : 1 }
    // One name is a prefix of the other. A folder's name goes on with a
    // "/", a blob's just ends (-1).
    let x = old.count > n ? Int(old[n]) : (isFolder ? Int(UInt8(ascii: "/")) : -1)
    let y = new.count > n ? Int(new[n]) : (newIsFolder ? Int(UInt8(ascii: "/")) : -1)
    if x == y { return old.count == new.count ? 0 : -1 }  // a "/" inside a new name cannot occur
    return x < y ? -1 : 1
  }
}
