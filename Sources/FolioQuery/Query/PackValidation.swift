/// A table's packed cache (``DocumentPack``) checked against one state of
/// its index: which record holds each live document, and which live
/// documents it lacks. Immutable, so that every query on that state shares
/// it (``SnapshotMemo``) instead of walking and checksumming the whole pack
/// again.
///
/// A record is taken only for a document whose stat data in the index is
/// the record's, and only if that stat data was not racy when the bytes
/// were read (``FileStat/isRacy(checkedAt:)``).
final class PackValidation: Sendable {
  let pack: DocumentPack?
  let pks: PKTable
  /// Per document id: where its bytes start in the pack (``notPacked``:
  /// not in it), how many there are, and when they were read.
  let offsets: [Int]
  let lengths: [Int32]
  let checkedAt: [Int64]
  /// Ids served from the pack, in pack order (a sequential read).
  let order: [Int32]
  /// Live ids the pack lacks, in id order.
  let missing: [Int32]
  /// Whether the pack is missing, damaged or mostly dead, and wants
  /// writing anew.
  let wantsRewrite: Bool
  /// Whether this was read back from a check another process saved.
  let isSaved: Bool

  /// The offset of a document the pack does not hold.
  static let notPacked = -1

  /// The stat data of the pack this was made from (nil: there was none).
  var packIdentity: FileStat? { pack?.identity }

  /// The check of the pack at `path` against `snapshot`: the one a process
  /// saved for the same base and the same pack (``PackCheckFile``), or a
  /// walk over the pack, saved in turn when the snapshot is a base alone.
  static func checking(path: String, signature: String, snapshot: IndexSnapshot) -> PackValidation {
    // A base alone: no document added, changed or removed since it was
    // written, so its generation names every live document and its stat.
    guard snapshot.overlay.isEmpty, let base = snapshot.base, snapshot.overridden.isEmpty else {
      return PackValidation(path: path, signature: signature, snapshot: snapshot)
    }
    if let pack = DocumentPack.open(path, signature: signature),
      let saved = PackCheckFile.read(
        packPath: path, identity: pack.identity, generation: base.generation, count: base.count)
    {
      return PackValidation(pack: pack, pks: PKTable(snapshot), saved: saved)
    }
    let fresh = PackValidation(path: path, signature: signature, snapshot: snapshot)
    if !fresh.wantsRewrite {
      PackCheckFile.write(fresh, packPath: path, generation: base.generation, lockPath: snapshot.lockPath)
    }
    return fresh
  }

  /// A check read back from a ``PackCheckFile``, for a snapshot with no
  /// overlay (every base document live).
  private init(
    pack: DocumentPack, pks: PKTable,
    saved: (offsets: [Int], lengths: [Int32], checkedAt: [Int64], order: [Int32])
  ) {
    var missing: [Int32] = []
    for id in 0..<saved.offsets.count where saved.offsets[id] < 0 { missing.append(Int32(id)) }
    (self.pack, self.pks, offsets, lengths, checkedAt) = (
      pack, pks, saved.offsets, saved.lengths, saved.checkedAt
    )
    (order, self.missing, wantsRewrite, isSaved) = (saved.order, missing, false, true)
  }

  init(path: String, signature: String, snapshot: IndexSnapshot) {
    let pack = DocumentPack.open(path, signature: signature)
    let pks = PKTable(snapshot)
    let total = pks.count
    var offsets = [Int](repeating: Self.notPacked, count: total)
    var lengths = [Int32](repeating: 0, count: total)
    var checkedAt = [Int64](repeating: 0, count: total)
    var order: [Int32] = []
    var intact = pack != nil
    var dead = 0
    if let pack {
      let base = pack.bytes.baseAddress!
      // A pack is written in some order the index also holds: its base's
      // own, by pk, or by an order key (the order of the scan that wrote
      // it). Following each of those orders alongside the records, the
      // next record is most often the next document in one of them: a
      // comparison of two pks instead of a hash lookup (and, when every
      // guess holds, no hash table at all).
      var orders = PackOrderGuess(base: snapshot.base, pks: pks)
      intact = pack.forEachRecord { record in
        var found = orders.next(matching: record.pk)
        if found == nil {
          found = pks.find(record.pk)
          if let id = found { orders.resume(after: id) }
        }
        guard let id = found, offsets[id] < 0, pks.stat(id) == record.stat,
          !record.stat.isRacy(checkedAt: record.checkedAt)
        else {
          dead += 1
          return
        }
        offsets[id] = record.document.baseAddress! - base
        lengths[id] = Int32(record.document.count)
        checkedAt[id] = record.checkedAt
        order.append(Int32(id))
      }
      pack.releasePages()
    }
    var missing: [Int32] = []
    for id in 0..<total where offsets[id] < 0 && pks.isLive(id) { missing.append(Int32(id)) }
    (self.pack, self.pks, self.offsets, self.lengths, self.checkedAt) = (
      pack, pks, offsets, lengths, checkedAt
    )
    (self.order, self.missing) = (order, missing)
    wantsRewrite = !intact || dead > order.count
    isSaved = false
  }
}

/// Where the next record of a pack most likely is, in each order a pack is
/// written in (see ``PackValidation``).
private struct PackOrderGuess {
  private let base: IndexBase?
  private let pks: PKTable
  /// Per order (base order, pk order, then each key's): the position of
  /// the next document expected.
  private var positions: [Int]
  /// Per order, each base document's position in it; made on the first
  /// guess that misses, to pick each order up again after the document
  /// that was found instead.
  private var places: [[Int32]] = []
  /// The order whose guess held last.
  private var lastOrder = 0

  init(base: IndexBase?, pks: PKTable) {
    self.base = base
    self.pks = pks
    positions = [Int](repeating: 0, count: 2 + (base?.keyCount ?? 0))
  }

  /// Moves every order on to the document after `id` (found by a lookup).
  mutating func resume(after id: Int) {
    guard id < pks.baseCount else { return }
    if places.isEmpty {
      places = positions.indices.map { order in
        var place = [Int32](repeating: 0, count: pks.baseCount)
        for position in 0..<pks.baseCount { place[document(order, position)] = Int32(position) }
        return place
      }
    }
    for order in positions.indices { positions[order] = Int(places[order][id]) + 1 }
  }

  /// The live base document at `position` in order `order`.
  private func document(_ order: Int, _ position: Int) -> Int {
    switch order {
    case 0: position
    case 1: base!.byPK(position)
    default: base!.byKey(order - 2, position)
    }
  }

  /// The document whose pk is `pk` if it is the next one of some order
  /// (which then moves on); nil if none guessed it.
  mutating func next(matching pk: UnsafeRawBufferPointer) -> Int? {
    let count = pks.baseCount
    // The order that guessed last comes first: a pack is mostly in one.
    for attempt in positions.indices {
      let order = attempt == 0 ? lastOrder : attempt == lastOrder ? 0 : attempt
      var position = positions[order]
      // Documents an overlay replaced are not in the pack at their place.
      while position < count, !pks.isLive(document(order, position)) { position += 1 }
      positions[order] = position
      guard position < count else { continue }
      let doc = document(order, position)
      if pks.withPK(doc, { $0.elementsEqual(pk) }) {
        positions[order] = position + 1
        lastOrder = order
        return doc
      }
    }
    return nil
  }
}
