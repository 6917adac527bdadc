internal import Clibgit2
import FolioCore
import FolioSystem
import Glibc

/// Checks every path and mode a tree from git would bring into the working
/// tree, before anything is written: the one gate between untrusted trees
/// (docs/security.md) and the disk. Every writer of a working
/// tree calls it: Folio's checkout (`folio sync`, the post-merge hook), the
/// in-process merge, concluding a stopped `git pull`, and `folio clone`.
///
/// The rules are git's own (`verify_path` and fsck), plus Folio's:
/// - no empty, `.` or `..` component, none holding `/` or `\`;
/// - no `.git` in any spelling git refuses: any case, trailing dots or
///   spaces, an NTFS stream suffix (`.git::$INDEX_ALLOCATION`), the 8.3 name
///   `git~1`, HFS+ ignorable code points (`.g\u{200C}it`);
/// - no `.gitmodules`, `.gitattributes`, `.gitignore` or `.mailmap` that is
///   a symlink;
/// - no two entries of one tree with the same name (a symlink `link` beside
///   a folder `link` would let `link/evil` be written through the link);
/// - inside a table folder, in `.folio/`, on the way to a table folder and
///   for `folio.yaml` and `.gitattributes`: no symlink and no gitlink (they
///   are not documents, and Folio never follows them);
/// - no name that cannot be written with Folio's temp suffix within
///   `NAME_MAX`, and no name that is one of Folio's own temp files;
/// - only git's modes (blob, executable, symlink, gitlink, tree).
///
/// Only the entries that differ from a trusted tree (the one already
/// checked out) are looked at, so a sync that changes one document in a
/// 100k-document table reads that table's folder once, not every tree.
struct TreePathValidator {
  let repository: GitRepository
  let config: Config

  /// The longest entry name Folio can write: its temp name
  /// (`.<name>.folio-tmp`, see `FileSystem.temporaryPath`) must fit
  /// `NAME_MAX` (255 bytes on Linux).
  static let maximumNameLength = 255 - ".".utf8.count - ".folio-tmp".utf8.count

  /// The longest path below the root Folio accepts (`PATH_MAX` is 4096 with
  /// its NUL, and the root's own path comes first).
  static let maximumPathLength = 3072

  /// git's modes, as they appear in trees.
  static let treeMode: UInt32 = 0o040000
  static let blobMode: UInt32 = 0o100644
  static let executableMode: UInt32 = 0o100755
  static let symlinkMode: UInt32 = 0o120000
  static let gitlinkMode: UInt32 = 0o160000

  /// Throws `UNSAFE_PATH`, naming `commit` and the path, for the first entry
  /// of `tree` (compared with `trusted`, the tree already checked out, or
  /// nil for all of it) that Folio must not write.
  func validate(_ tree: GitTree, of commit: GitOID, against trusted: GitTree?) throws {
    let incoming = try incomingConfig(tree, of: commit, against: trusted)
    // Links are refused in the folders of both configs: the tables this
    // store has, and those the tree's folio.yaml adds.
    let checker = TreePathValidator(
      repository: repository,
      config: incoming.map { Config(tables: config.tables + $0.tables) } ?? config)
    try checker.validatePaths(tree, of: commit, against: trusted)
  }

  /// The tree's `folio.yaml` when it differs from the trusted tree's: it
  /// must load, as this store would load it (YAML that parses, table folders
  /// inside the store, outside `.git`, not nested in one another), or
  /// nothing lands; every command would fail on the store after.
  /// - Throws: `INVALID_CONFIG` at `folio.yaml:LINE:COL`, naming the commit.
  private func incomingConfig(_ tree: GitTree, of commit: GitOID, against trusted: GitTree?) throws
    -> Config?
  {
    let entry = tree.entry(at: Config.fileName)
    let old = trusted?.entry(at: Config.fileName)
    if let entry, let old, entry.id == old.id, entry.mode == old.mode { return nil }
    guard let entry else {
      if trusted == nil || old == nil { return nil }
      throw FolioError(
        .invalidConfig,
        "commit \(commit.description.prefix(12)) removes \(Config.fileName), and without it the store cannot open; nothing was written (commit \(commit.description))",
        path: Config.fileName)
    }
    let bytes = try repository.blob(entry.id)
    do {
      return try Config(bytes: bytes, file: Config.fileName)
    } catch var error as FolioError {
      error.message +=
        " (in the \(Config.fileName) of commit \(commit.description.prefix(12)), which would make every command fail on this store; nothing was written)"
      throw error
    }
  }

  private func validatePaths(_ tree: GitTree, of commit: GitOID, against trusted: GitTree?) throws {
    var pending: [(tree: GitOID, trusted: GitOID?, prefix: String)] = [(tree.id, trusted?.id, "")]
    while let (id, trustedID, prefix) = pending.popLast() {
      if id == trustedID { continue }
      let folder = try repository.tree(id)
      let old = try trustedID.map { try repository.tree($0) }
      if let name = Self.duplicateName(in: folder) {
        let path = prefix + String(decoding: name, as: UTF8.self)
        throw FolioError(
          .unsafePath,
          "commit \(commit.description.prefix(12)) brings '\(path)': the folder holds two entries of that name "
            + "(git fsck: duplicateEntries); nothing was written (commit \(commit.description))",
          path: path)
      }
      // The trusted folder is walked beside this one, both in git's order:
      // an entry is matched without a search. Entries out of order (a tree
      // built by hand) find no match and are checked, which is safe.
      let oldCount = old.map { git_tree_entrycount($0.handle) } ?? 0
      var oldIndex = 0
      for index in 0..<git_tree_entrycount(folder.handle) {
        guard let entry = git_tree_entry_byindex(folder.handle, index) else { continue }
        let name = git_tree_entry_name(entry)!
        let mode = UInt32(git_tree_entry_filemode_raw(entry).rawValue)
        // An entry as trusted is passed over before anything is allocated
        // for it: in a changed folder of 100,000 documents, most are.
        var match: OpaquePointer?
        while oldIndex < oldCount, let candidate = git_tree_entry_byindex(old!.handle, oldIndex) {
          let order = GitRepository.treeOrder(candidate, entry)
          if order > 0 { break }
          oldIndex += 1
          if order == 0 {
            match = candidate
            break
          }
        }
        if let match, UInt32(git_tree_entry_filemode_raw(match).rawValue) == mode,
          git_oid_equal(git_tree_entry_id(match), git_tree_entry_id(entry)) != 0
        {
          continue
        }
        let nameBytes = Self.bytes(name)
        let entryID = GitOID(git_tree_entry_id(entry).pointee)
        // Spelled out only for a refusal, a link or a folder to enter: most
        // entries of a changed folder of 100,000 are plain files.
        var path: String { prefix + String(decoding: nameBytes, as: UTF8.self) }
        func refuse(_ reason: String) -> FolioError {
          let path = path
          return FolioError(
            .unsafePath,
            "commit \(commit.description.prefix(12)) brings '\(path)': \(reason); nothing was written "
              + "(commit \(commit.description))",
            path: path)
        }
        let trustedEntry = match.map {
          (id: GitOID(git_tree_entry_id($0).pointee), mode: UInt32(git_tree_entry_filemode_raw($0).rawValue))
        }
        if let reason = Self.problem(name: nameBytes, mode: mode) { throw refuse(reason) }
        if prefix.utf8.count + nameBytes.count > Self.maximumPathLength {
          throw refuse("the path is longer than \(Self.maximumPathLength) bytes")
        }
        if mode == Self.symlinkMode || mode == Self.gitlinkMode, let owner = folioOwner(of: path) {
          let kind = mode == Self.symlinkMode ? "a symlink" : "a gitlink (submodule)"
          throw refuse(
            "\(kind) \(owner), where Folio keeps only plain files and folders; Folio never follows links "
              + "there; remove it from the remote's history or move it out of Folio's folders")
        }
        if mode == Self.treeMode {
          let trustedTree = trustedEntry?.mode == Self.treeMode ? trustedEntry?.id : nil
          pending.append((entryID, trustedTree, path + "/"))
        }
      }
    }
  }

  /// Which of Folio's own places `path` is in, for a link there: nil when
  /// it is in none.
  func folioOwner(of path: String) -> String? { Self.owner(of: path, config: config) }

  /// ``folioOwner(of:)`` for the tables of `config`.
  static func owner(of path: String, config: Config) -> String? {
    if path == Config.fileName || path == ".gitattributes" { return "as Folio's own \(path)" }
    if path == ".folio" || path.hasPrefix(".folio/") { return "in Folio's op log folder" }
    for table in config.tables {
      if path == table.path || path.hasPrefix(table.path + "/") {
        return "in table '\(table.name)' (folder \(table.path))"
      }
      if table.path.hasPrefix(path + "/") {
        return "on the way to table '\(table.name)' (folder \(table.path))"
      }
    }
    return nil
  }

  /// Why a tree entry named `name` with `mode` is refused, or nil if git
  /// and Folio can write it.
  static func problem(name: [UInt8], mode: UInt32) -> String? {
    if name.isEmpty { return "an empty file name" }
    if name == [0x2E] || name == [0x2E, 0x2E] { return "'.' and '..' name no file of their own" }
    if name.contains(0x2F) { return "a file name with '/' in it" }
    if name.contains(0x5C) { return "a file name with '\\' in it (git refuses it with core.protectNTFS)" }
    if name.contains(0) { return "a file name with NUL in it" }
    // Only a name starting with '.', 'g' or 'G', or with a code point HFS+
    // ignores (never ASCII), can fold to .git or git~1; most names are
    // spared the folding.
    if mode == symlinkMode || name[0] == 0x2E || name[0] | 0x20 == 0x67 || name[0] >= 0x80 {
      let folded = foldedName(name)
      if isDotGit(folded) { return "it names git's own folder (.git in any spelling git refuses)" }
      if mode == symlinkMode, isGitControlFile(folded) {
        return "git refuses \(String(decoding: name, as: UTF8.self)) as a symlink"
      }
    }
    if name.first == 0x2E, name.count > 10, name.suffix(10).elementsEqual(".folio-tmp".utf8) {
      return "the name of one of Folio's temp files"
    }
    switch mode {
    case treeMode:
      if name.count > 255 { return "a folder name longer than 255 bytes (NAME_MAX)" }
    case blobMode, executableMode, 0o100664, symlinkMode, gitlinkMode:
      if name.count > maximumNameLength {
        return "a file name of \(name.count) bytes; Folio writes at most \(maximumNameLength) "
          + "(NAME_MAX is 255, and its temp name adds 11)"
      }
    default:
      return "file mode \(String(mode, radix: 8)), which git does not write"
    }
    return nil
  }

  /// A name two entries of `folder` share, or nil.
  ///
  /// In git's order each entry sorts strictly after the one before it (a
  /// folder's name compared as if it ended in '/'), which leaves one way
  /// for two entries to share a name: a file and a folder of that name, not
  /// side by side. So a sorted folder needs a set of its folders' names
  /// only, and one of every name only when it is not sorted (which git's
  /// fsck refuses, but a tree made by hand and pulled without it may be).
  static func duplicateName(in folder: GitTree) -> [UInt8]? {
    let count = git_tree_entrycount(folder.handle)
    var previous: (name: UnsafePointer<CChar>, length: Int, isTree: Bool)?
    var sorted = true
    var folders = Set<[UInt8]>()
    for index in 0..<count {
      guard let entry = git_tree_entry_byindex(folder.handle, index) else { continue }
      let name = git_tree_entry_name(entry)!
      let current = (
        name: name, length: strlen(name), isTree: git_tree_entry_filemode_raw(entry).rawValue == treeMode
      )
      if current.isTree { folders.insert(bytes(name)) }
      if let previous {
        let order = gitOrder(previous, current)
        if order == 0 { return bytes(name) }
        if order > 0 { sorted = false }
      }
      previous = current
    }
    if sorted && folders.isEmpty { return nil }
    var seen = Set<[UInt8]>()
    for index in 0..<count {
      guard let entry = git_tree_entry_byindex(folder.handle, index) else { continue }
      let name = bytes(git_tree_entry_name(entry)!)
      if sorted {
        // Only a file named as a folder can be a duplicate here.
        if git_tree_entry_filemode_raw(entry).rawValue != treeMode, folders.contains(name) { return name }
      } else if !seen.insert(name).inserted {
        return name
      }
    }
    return nil
  }

  /// How two entries compare in git's tree order: bytewise, a folder's name
  /// as if it ended in '/'.
  private static func gitOrder(
    _ a: (name: UnsafePointer<CChar>, length: Int, isTree: Bool),
    _ b: (name: UnsafePointer<CChar>, length: Int, isTree: Bool)
  ) -> Int {
    let common = min(a.length, b.length)
    let prefix = memcmp(a.name, b.name, common)
    if prefix != 0 { return Int(prefix) }
    let next = { (entry: (name: UnsafePointer<CChar>, length: Int, isTree: Bool)) -> Int in
      entry.length > common ? Int(UInt8(bitPattern: entry.name[common])) : (entry.isTree ? 0x2F : 0)
    }
    return next(a) - next(b)
  }

  /// `name` as NTFS and HFS+ would see it: ASCII lowercased, HFS+
  /// ignorable code points dropped, anything from an NTFS stream separator
  /// (`:`) on dropped, trailing dots and spaces dropped.
  private static func foldedName(_ name: [UInt8]) -> [UInt8] {
    if name.allSatisfy({ $0 < 0x80 }) {
      // The common case, without decoding: ASCII has no HFS+ ignorables.
      var folded = name.prefix { $0 != UInt8(ascii: ":") }.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
      while let last = folded.last, last == 0x2E || last == 0x20 { folded.removeLast() }
      return folded
    }
    var scalars: [UInt8] = []
    for scalar in String(decoding: name, as: UTF8.self).unicodeScalars {
      if isHFSIgnorable(scalar.value) { continue }
      if scalar == ":" { break }
      if scalar.isASCII {
        scalars.append(UInt8(scalar.value) | (scalar.properties.isUppercase ? 0x20 : 0))
      } else {
        scalars += Array(String(scalar).utf8)
      }
    }
    while let last = scalars.last, last == 0x2E || last == 0x20 { scalars.removeLast() }
    return scalars
  }

  /// The code points HFS+ ignores when it compares names (git's
  /// `next_hfs_char`).
  private static func isHFSIgnorable(_ value: UInt32) -> Bool {
    switch value {
    case 0x200C...0x200F, 0x202A...0x202E, 0x206A...0x206F, 0xFEFF: return true
    default: return false
    }
  }

  private static func isDotGit(_ folded: [UInt8]) -> Bool {
    folded.elementsEqual(".git".utf8) || folded.elementsEqual("git~1".utf8)
  }

  /// git's files that must not be symlinks (fsck `gitmodulesSymlink`,
  /// `gitattributesSymlink`, …), and their 8.3 short names.
  private static func isGitControlFile(_ folded: [UInt8]) -> Bool {
    let text = String(decoding: folded, as: UTF8.self)
    if [".gitmodules", ".gitattributes", ".gitignore", ".mailmap"].contains(text) { return true }
    return ["gitmod~", "gitatt~", "gitign~", "mailma~"].contains { text.hasPrefix($0) }
  }

  private static func bytes(_ name: UnsafePointer<CChar>) -> [UInt8] {
    Array(UnsafeRawBufferPointer(start: name, count: strlen(name)))
  }
}
