import FolioSystem
import Glibc

/// This replica's op log, kept as segments: where ops go, when a segment
/// is sealed, and the segments' files. The newest segment found is cached
/// in the store (`Store.opLogSegment`).
package struct OpLogSegments {
  /// The store whose log this is.
  let store: Store

  /// The size past which a commit starts a new segment of this replica's
  /// op log: 1 MiB.
  ///
  /// A replica's log is `.folio/ops/<replica>.ndjson`, then
  /// `<replica>.1.ndjson`, `<replica>.2.ndjson` and so on. Ops are appended
  /// to the newest segment only; once a commit leaves it past this size,
  /// the next op goes to a new one, and the old one never changes again.
  /// So a commit writes a blob of at most about this size for the log, not
  /// the whole history of the replica (an import of 300,000 rows logs 30
  /// MB), and a merge or a clock check reads only the segments that differ
  /// between the commits it compares: the others have the same blob id.
  package static let segmentBytes = 1 << 20

  /// The file name of segment `segment` of `replica`'s op log.
  package static func fileName(replica: String, segment: Int) -> String {
    segment == 0 ? replica + ".ndjson" : replica + "." + String(segment) + ".ndjson"
  }

  /// The replica and the segment an op log's file name names.
  package static func replicaAndSegment(_ name: String) -> (replica: Substring, segment: Int) {
    let stem = name.hasSuffix(".ndjson") ? name.dropLast(7) : Substring(name)
    if let dot = stem.lastIndex(of: "."), let segment = Int(stem[stem.index(after: dot)...]), segment > 0 {
      return (stem[..<dot], segment)
    }
    return (stem, 0)
  }

  /// The file name of this replica's op log segment that ops go to: the
  /// newest one, or the one after it once a commit sealed it (its file is
  /// made by the first append). Another process may have sealed or started
  /// a segment since this one last looked: a `stat` and a small read find
  /// out.
  package var activeName: String { Self.fileName(replica: store.replicaID, segment: active()) }

  /// Where a commit notes that the newest segment is sealed. Not committed:
  /// without it, ops go on to the sealed segment, which costs only size.
  var sealedPath: String { store.privateDirectory + "/oplog-sealed" }

  private func segmentExists(_ segment: Int) -> Bool {
    var st = stat()
    return lstat(
      store.rootPath + "/" + Store.opsFolder + "/"
        + Self.fileName(replica: store.replicaID, segment: segment), &st)
      == 0
  }

  /// The newest segment that exists (0 when none does).
  private func newest() -> Int {
    var segment = store.opLogSegment.withLock { $0 }
    if segment < 0 {
      segment = 0
      for name in (try? FileSystem.list(store.rootPath + "/" + Store.opsFolder)) ?? []
      where name.hasSuffix(".ndjson") {
        let (replica, number) = Self.replicaAndSegment(name)
        if replica == store.replicaID { segment = max(segment, number) }
      }
    }
    while segmentExists(segment + 1) { segment += 1 }
    let found = segment
    store.opLogSegment.withLock { $0 = max($0, found) }
    return found
  }

  func active() -> Int {
    let newest = newest()
    let sealed = (try? FileSystem.read(sealedPath)).flatMap { $0 }.map {
      String(decoding: $0, as: UTF8.self)
    }
    return sealed == Self.fileName(replica: store.replicaID, segment: newest) ? newest + 1 : newest
  }

  /// Seals the segment ops go to when it is past ``segmentBytes``, so
  /// that the next op starts a new one; call with the store lock held,
  /// after a commit took the segment whole.
  /// - Returns: whether it sealed one.
  @discardableResult
  package func sealIfFull() -> Bool {
    let name = activeName
    guard let size = FileSystem.size(store.opLogPath), size >= Self.segmentBytes else { return false }
    return (try? FileSystem.writeAtomically(sealedPath, Array(name.utf8), sync: false)) != nil
  }

  /// What the cached clock is keyed by: the newest segment and its size,
  /// which change whenever an op is appended.
  func clockKey() -> Int {
    var st = stat()
    let size = stat(store.opLogPath, &st) == 0 ? Int(st.st_size) : 0
    return active() << 40 | size
  }

  /// This replica's op log segments, newest first (the first may not
  /// exist yet).
  package var paths: [String] {
    (0...active()).reversed().map {
      store.rootPath + "/" + Store.opsFolder + "/" + Self.fileName(replica: store.replicaID, segment: $0)
    }
  }
}
