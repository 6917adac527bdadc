import FolioGit
import FolioQuery
import FolioSystem

/// What an import has staged so far: each document's file name in the
/// order staged, and, when the import will be committed, its blob id, the
/// blob itself having gone into the import's pack while the bytes were in
/// hand. The commit then reads no document back.
///
/// It also keeps, per name, the stat data of the table's file as the import
/// first read it (or that there was none). Staging runs outside the store
/// lock; at landing, under the lock, ``isCurrent(tableDirectory:)`` tells
/// whether another writer changed any of those files meanwhile.
final class ImportManifest {
  /// The table folder was empty or missing when the import began.
  let tableWasEmpty: Bool
  /// Where blobs go; nil for an import that is not committed.
  let pack: GitPackFile?
  /// File names, in the order first staged.
  private(set) var names: [String] = []
  /// 20 bytes per name (when packing): the id of its latest staged bytes.
  private(set) var ids: [UInt8] = []
  /// A name's position in `names`.
  private(set) var index: [String: Int] = [:]
  /// Names staged more than once (upsert modes), with the id of the bytes
  /// packed the first time. Only the first version is packed while
  /// staging, so the pack never holds one object twice; the commit packs
  /// the final bytes if they differ.
  private(set) var restaged: [Int: GitOID] = [:]
  /// Per name, the table's file when first read; nil where there was none.
  /// Empty when the table was (landing checks that it still is).
  private(set) var bases: [FileStat?] = []

  init(tableWasEmpty: Bool, pack: GitPackFile?) {
    self.tableWasEmpty = tableWasEmpty
    self.pack = pack
  }

  /// Records `bytes` staged as `name`; `existing` is the name's position if
  /// it was staged before (a later row for the same pk replaces it), and
  /// `base` the table's file as read before its first staging.
  func add(_ name: String, bytes: [UInt8], at existing: Int?, base: FileStat?) throws {
    let k: Int
    if let existing {
      k = existing
    } else {
      k = names.count
      names.append(name)
      index[name] = k
      if !tableWasEmpty { bases.append(base) }
      if pack != nil { ids.append(contentsOf: repeatElement(0, count: 20)) }
    }
    guard let pack else { return }
    if existing != nil {
      let id = try GitRepository.hashBlob(bytes)
      if restaged[k] == nil { restaged[k] = GitOID(bytes: Array(ids[(k * 20)..<(k * 20 + 20)])) }
      ids.replaceSubrange((k * 20)..<(k * 20 + 20), with: id.bytes)
      return
    }
    try bytes.withUnsafeBytes { raw in
      try ids.withUnsafeMutableBytes { all in
        try pack.addBlob(
          raw, id: UnsafeMutableRawBufferPointer(rebasing: all[(k * 20)..<(k * 20 + 20)]), compress: false)
      }
    }
  }

  /// Whether the table is as staging saw it: still empty if it was, and
  /// every staged name's file as first read. Call with the store lock held.
  func isCurrent(tableDirectory: String) throws -> Bool {
    if tableWasEmpty { return try FileSystem.isEmptyDirectory(tableDirectory) }
    for (k, name) in names.enumerated() where FileStat.of(tableDirectory + "/" + name) != bases[k] {
      return false
    }
    return true
  }
}
