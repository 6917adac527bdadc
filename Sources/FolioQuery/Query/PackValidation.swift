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

  /// The offset of a document the pack does not hold.
  static let notPacked = -1

  /// The stat data of the pack this was made from (nil: there was none).
  var packIdentity: FileStat? { pack?.identity }

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
      // A pack is mostly written in id order (the index's order), so the
      // record after id n is most often id n + 1: a comparison of two pks
      // instead of a hash lookup (and, when every guess holds, no hash
      // table at all).
      var guess = 0
      intact = pack.forEachRecord { record in
        let found: Int?
        if guess < total, pks.isLive(guess), pks.withPK(guess, { $0.elementsEqual(record.pk) }) {
          found = guess
        } else {
          found = pks.find(record.pk)
        }
        if let found { guess = found + 1 }
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
  }
}
