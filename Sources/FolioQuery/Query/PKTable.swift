import FolioJSON

/// The live documents of an index snapshot by pk bytes: ids `0..<base.count`
/// are the base's documents, the rest the overlay's. A base pk is found by
/// the base's own hash table (``IndexBase/find(_:)``, made once per base),
/// an overlay pk by a dictionary of the overlay, so that matching 300k pack
/// records costs a hash each.
///
/// It holds the parts of the snapshot it reads, not the snapshot, so that a
/// ``SnapshotMemo`` can keep it without keeping itself alive.
struct PKTable: Sendable {
  private let base: IndexBase?
  private let overridden: OverriddenDocuments
  let baseCount: Int
  private let overlayPKs: [[UInt8]]
  private let overlayStats: [FileStat]
  private let overlayIDs: [ExactKey: Int]

  var count: Int { baseCount + overlayPKs.count }

  init(_ snapshot: IndexSnapshot) {
    base = snapshot.base
    overridden = snapshot.overridden
    baseCount = snapshot.base?.count ?? 0
    overlayPKs = snapshot.overlay.map { Array($0.pk.utf8) }
    overlayStats = snapshot.overlay.map(\.entry.stat)
    var ids: [ExactKey: Int] = [:]
    for (i, item) in snapshot.overlay.enumerated() { ids[ExactKey(item.pk)] = baseCount + i }
    overlayIDs = ids
  }

  func isLive(_ id: Int) -> Bool { id >= baseCount || !overridden[id] }

  func withPK<R>(_ id: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    if id < baseCount { return base!.withPKBytes(id, body) }
    return overlayPKs[id - baseCount].withUnsafeBytes(body)
  }

  func pk(_ id: Int) -> String { withPK(id) { String(decoding: $0, as: UTF8.self) } }

  func stat(_ id: Int) -> FileStat { id < baseCount ? base!.stat(id) : overlayStats[id - baseCount] }

  /// The live document whose pk is `pk` (UTF-8). A base document the
  /// overlay overrides is not live: its pk is then the overlay's, if live.
  func find(_ pk: UnsafeRawBufferPointer) -> Int? {
    if let doc = base?.find(pk), !overridden[doc] { return doc }
    guard !overlayIDs.isEmpty, let key = String(validating: pk, as: UTF8.self) else { return nil }
    return overlayIDs[ExactKey(key)]
  }
}
