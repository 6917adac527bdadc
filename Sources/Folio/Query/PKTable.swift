/// The live documents of an index snapshot by pk bytes: ids `0..<base.count`
/// are the base's documents, the rest the overlay's. An open-addressing hash
/// table, so that matching 300k pack records costs a hash each.
///
/// It holds the parts of the snapshot it reads, not the snapshot, so that a
/// ``SnapshotMemo`` can keep it without keeping itself alive.
struct PKTable: Sendable {
  private let base: IndexBase?
  private let overridden: [Bool]
  let baseCount: Int
  private let overlayPKs: [[UInt8]]
  private let overlayStats: [FileStat]
  private var slots: [Int32]
  private let mask: Int

  var count: Int { baseCount + overlayPKs.count }

  init(_ snapshot: IndexSnapshot) {
    base = snapshot.base
    overridden = snapshot.overridden
    baseCount = snapshot.base?.count ?? 0
    overlayPKs = snapshot.overlay.map { Array($0.pk.utf8) }
    overlayStats = snapshot.overlay.map(\.entry.stat)
    let total = baseCount + overlayPKs.count
    var capacity = 16
    while capacity < total * 2 { capacity <<= 1 }
    mask = capacity - 1
    self.slots = []
    var slots = [Int32](repeating: -1, count: capacity)
    for id in 0..<total where isLive(id) {
      var slot = withPK(id) { Int(truncatingIfNeeded: FNV.hash($0)) } & mask
      while slots[slot] >= 0 { slot = (slot + 1) & mask }
      slots[slot] = Int32(id)
    }
    self.slots = slots
  }

  func isLive(_ id: Int) -> Bool { id >= baseCount || !overridden[id] }

  func withPK<R>(_ id: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    if id < baseCount { return base!.withPKBytes(id, body) }
    return overlayPKs[id - baseCount].withUnsafeBytes(body)
  }

  func pk(_ id: Int) -> String { withPK(id) { String(decoding: $0, as: UTF8.self) } }

  func stat(_ id: Int) -> FileStat { id < baseCount ? base!.stat(id) : overlayStats[id - baseCount] }

  /// The live document whose pk is `pk` (UTF-8).
  func find(_ pk: UnsafeRawBufferPointer) -> Int? {
    var slot = Int(truncatingIfNeeded: FNV.hash(pk)) & mask
    while slots[slot] >= 0 {
      let id = Int(slots[slot])
      if withPK(id, { $0.elementsEqual(pk) }) { return id }
      slot = (slot + 1) & mask
    }
    return nil
  }
}
