import Folio
import FolioCore
import FolioTestSupport
import Foundation
import Testing

@testable import FolioQuery

/// The update between two result lists, checked against a brute-force
/// reconstruction on random lists.
struct LiveQueryDiffTests {
  static func document(_ pk: String, _ version: Int) -> Document {
    Document(pk: pk, table: "t", value: ["v": .integer(version)])
  }

  @Test func randomListsRoundTrip() throws {
    let seed =
      ProcessInfo.processInfo.environment["FOLIO_TEST_SEED"].flatMap(UInt64.init)
      ?? UInt64.random(in: 0...UInt64.max)
    var rng = ObservationRandom(seed: seed)
    for _ in 0..<2_000 {
      let pool = (0..<Int(rng.next() % 10)).map { "k\($0)" }
      func list() -> [Document] {
        pool.filter { _ in rng.next() % 3 != 0 }.shuffled(using: &rng).map {
          Self.document($0, Int(rng.next() % 2))
        }
      }
      let old = list()
      let new = list()
      guard let update = LiveQueryUpdate.diff(old: old, new: new, ordering: .child("v")) else {
        #expect(old == new, "seed \(seed)")
        continue
      }
      #expect(old != new, "seed \(seed)")
      let context = "seed \(seed): \(old.map(\.pk)) -> \(new.map(\.pk))"
      #expect(update.oldDocuments == old, "\(context)")
      // Index sets: rebuild the new list from the old one.
      var rebuilt = [Document?](repeating: nil, count: new.count)
      for i in update.insertions { rebuilt[i] = new[i] }
      for move in update.moves { rebuilt[move.to] = old[move.from] }
      let deleted = Set(update.deletions)
      let moved = Set(update.moves.map(\.from))
      var staying = old.indices.filter { !deleted.contains($0) && !moved.contains($0) }.map { old[$0] }[...]
      for i in rebuilt.indices where rebuilt[i] == nil { rebuilt[i] = staying.popFirst() }
      #expect(staying.isEmpty, "\(context)")
      // Only the updated ones differ in content; bring them up to date.
      for i in update.updates {
        #expect(rebuilt[i]?.pk == new[i].pk && rebuilt[i] != new[i], "\(context)")
        rebuilt[i] = new[i]
      }
      #expect(rebuilt == new.map { Optional($0) }, "\(context)")
      // Brute force: what was removed, added and changed.
      let oldPKs = Set(old.map(\.pk))
      let newPKs = Set(new.map(\.pk))
      #expect(Set(update.deletions.map { old[$0].pk }) == oldPKs.subtracting(newPKs), "\(context)")
      #expect(Set(update.insertions.map { new[$0].pk }) == newPKs.subtracting(oldPKs), "\(context)")
      let changed = new.filter { d in old.contains { $0.pk == d.pk && $0 != d } }.map(\.pk)
      #expect(update.updates.map { new[$0].pk } == changed, "\(context)")
      // Child events: the same, in the order removed, added, moved, changed,
      // each naming its predecessor.
      let kinds = update.childEvents.map(\.kind)
      let rank: [ChildEvent.Kind: Int] = [.removed: 0, .added: 1, .moved: 2, .changed: 3]
      #expect(kinds.map { rank[$0]! } == kinds.map { rank[$0]! }.sorted(), "\(context)")
      for child in update.childEvents {
        let list = child.kind == .removed ? old : new
        let i = try #require(list.firstIndex { $0.pk == child.key }, "\(context): \(child.key)")
        #expect(child.prevKey == (i > 0 ? list[i - 1].pk : nil), "\(context): \(child.key)")
        #expect(child.document == list[i], "\(context): \(child.key)")
      }
      #expect(update.childEvents.filter { $0.kind == .removed }.count == update.deletions.count, "\(context)")
      #expect(update.childEvents.filter { $0.kind == .added }.count == update.insertions.count, "\(context)")
      // EventGenerator.ts: every changed document whose order value ("v")
      // changed is moved, wherever it lands; the index-set moves are the
      // fewest that explain the order, a separate description.
      #expect(update.childEvents.filter { $0.kind == .moved }.map(\.key) == changed, "\(context)")
      #expect(update.childEvents.filter { $0.kind == .changed }.map(\.key) == changed, "\(context)")
      // Moves are fewest: what stays keeps its relative order and no
      // longer order-keeping run exists (checked by brute force on small lists).
      let common = new.filter { oldPKs.contains($0.pk) }.map { pk in old.firstIndex { $0.pk == pk.pk }! }
      #expect(common.count - update.moves.count == Self.longestIncreasing(common), "\(context)")
    }
  }

  /// The length of a longest increasing subsequence, by brute force.
  static func longestIncreasing(_ values: [Int]) -> Int {
    var best = [Int](repeating: 1, count: values.count)
    for i in values.indices {
      for j in 0..<i where values[j] < values[i] { best[i] = max(best[i], best[j] + 1) }
    }
    return best.max() ?? 0
  }
}

/// A small seeded generator, so a failure can be replayed with FOLIO_TEST_SEED.
struct ObservationRandom: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
