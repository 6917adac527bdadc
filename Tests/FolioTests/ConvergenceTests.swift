import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioGit

/// The randomized replica test of the merge's invariants (docs/architecture.md, "The replay merge"): three
/// replicas mutate at random, sync in random orders (through a shared bare
/// remote and directly with each other, which makes criss-cross histories),
/// then each merges the others' final heads on its own. Afterwards every
/// table is byte-identical, every counter is the sum of its increments, every
/// union survives unless a later remove dropped it, and the latest
/// assignment wins.
///
/// `FOLIO_CONVERGENCE_SEEDS=N` runs N seeds (default 20); `FOLIO_TEST_SEED`
/// replays one.
@Suite(.serialized) struct ConvergenceTests {
  static let yaml = """
    version: 1
    tables:
      items:
        path: items
        columns:
          views: counter
          tags: set
    """
  static let stable = ["s0", "s1", "s2"]
  static let chaos = ["x0", "x1", "x2", "x3"]
  static let tagPool = ["a", "b", "c", "d", "e"]

  static var seeds: [UInt64] {
    if let text = ProcessInfo.processInfo.environment["FOLIO_TEST_SEED"], let seed = UInt64(text) {
      return [seed]
    }
    let count = Int(ProcessInfo.processInfo.environment["FOLIO_CONVERGENCE_SEEDS"] ?? "") ?? 20
    var generator = JSONRandom(seed: JSONRandom.seed())
    return (0..<count).map { _ in generator.next() }
  }

  @Test func replicasConverge() throws {
    for seed in Self.seeds {
      do {
        try run(seed: seed)
      } catch {
        Issue.record("seed \(seed) (replay with FOLIO_TEST_SEED=\(seed)): \(error)")
        throw error
      }
    }
  }

  func run(seed: UInt64) throws {
    var random = JSONRandom(seed: seed)
    let fixture = try SyncFixture()
    defer { fixture.remove() }
    let first = try fixture.seed(yaml: Self.yaml)
    try first.write { tx in
      for pk in Self.stable {
        try tx.apply(
          table: "items", pk: pk, op: .insert, columns: ["views": 0, "tags": [], "title": "start"])
      }
    }
    try first.sync()
    var replicas = [first, try fixture.clone("r1"), try fixture.clone("r2")]
    for (i, replica) in replicas.enumerated() {
      for j in replicas.indices where j != i {
        try git(
          ["remote", "add", "r\(j)", "file://" + fixture.scratch.path + "/r\(j)"], in: replica.rootPath)
        try git(["init", "-q", "--bare", fixture.scratch.path + "/m\(i)-\(j).git"], in: fixture.scratch.path)
        try git(
          ["remote", "add", "m\(j)", "file://" + fixture.scratch.path + "/m\(j)-\(i).git"],
          in: replica.rootPath)
      }
    }
    var increments: [String: DecimalInteger] = [:]
    // Causality, as the test sees it: the ops each op's replica held when
    // it was made. The conflict model is built from this, not from merges.
    var seen: [HLC: Set<HLC>] = [:]
    for _ in 0..<30 {
      let r = random.int(0...2)
      let replica = replicas[r]
      switch random.int(0...99) {
      case 0..<60:
        let known = Set(try OpLog.allEntries(root: replica.rootPath).map(\.op.hlc))
        try mutate(replica, random: &random, increments: &increments)
        for entry in try OpLog.allEntries(root: replica.rootPath) where !known.contains(entry.op.hlc) {
          seen[entry.op.hlc] = known
        }
      case 60..<80:
        try replica.sync()
      default:
        let peer = (r + random.int(1...2)) % 3
        try replica.sync(remote: "r\(peer)", push: false)
      }
    }
    // Freeze each replica's head in bare mirrors, then let every replica
    // merge the other two on its own, in a random order.
    for (i, replica) in replicas.enumerated() {
      try replica.commit()
      for j in replicas.indices where j != i {
        try git(
          ["push", "-q", fixture.scratch.path + "/m\(i)-\(j).git", "HEAD:refs/heads/main"],
          in: replica.rootPath)
      }
    }
    for (i, replica) in replicas.enumerated() {
      var others = replicas.indices.filter { $0 != i }
      if random.chance(50) { others.reverse() }
      for j in others { try replica.sync(remote: "m\(j)", push: false) }
    }
    let tables = try replicas.map(tableFiles)
    #expect(tables[0] == tables[1], "seed \(seed): r0 and r1 differ")
    #expect(tables[0] == tables[2], "seed \(seed): r0 and r2 differ")
    // Every file on every replica is valid JSON in canonical form (the
    // canonical writer's bytes of what it parses to), with no markers.
    for (r, files) in tables.enumerated() {
      for (path, bytes) in files {
        #expect(!Self.hasConflictMarker(bytes), "seed \(seed): r\(r) \(path) holds conflict markers")
        let value = try #require(
          try? JSONValue(parsing: bytes), "seed \(seed): r\(r) \(path) is not valid JSON")
        #expect(value.canonicalBytes() == bytes, "seed \(seed): r\(r) \(path) is not canonical")
      }
    }
    try checkInvariants(replicas[0], increments: increments, seed: seed)
    try checkConflicts(replicas, seen: seen, seed: seed)
    // And the ordinary path still ends in one history.
    for replica in replicas + replicas { try replica.sync() }
    #expect(
      try replicas.map(tableFiles).allSatisfy { $0 == tables[0] }, "seed \(seed): final sync changed tables")
    try checkConflicts(replicas, seen: seen, seed: seed)
    replicas.removeAll()
  }

  /// Whether a line starts with one of git's conflict markers.
  static func hasConflictMarker(_ bytes: [UInt8]) -> Bool {
    let text = String(decoding: bytes, as: UTF8.self)
    return text.split(separator: "\n").contains { line in
      ["<<<<<<<", "=======", ">>>>>>>", "|||||||"].contains { line.hasPrefix($0) }
    }
  }

  func mutate(_ store: Store, random: inout JSONRandom, increments: inout [String: DecimalInteger]) throws {
    let items = store.collection("items")
    if random.chance(65) {
      let pk = Self.stable[random.int(0...Self.stable.count - 1)]
      switch random.int(0...5) {
      case 0:
        let amounts: [Int64] = [1, 7, -3, 2_000_000_000, -2_100_000_000, 3_000_000_000_000]
        let by = amounts[random.int(0...amounts.count - 1)]
        try store.apply(
          table: "items", pk: pk, op: .update,
          transforms: ["views": ["op": "increment", "by": .number(String(by))]])
        increments[pk] = (increments[pk] ?? DecimalInteger(0)) + DecimalInteger(Int(by))
      case 1:
        let tag = Self.tagPool[random.int(0...Self.tagPool.count - 1)]
        try store.apply(
          table: "items", pk: pk, op: .update,
          transforms: ["tags": ["op": "arrayUnion", "values": [.string(tag)]]])
      case 2:
        let tag = Self.tagPool[random.int(0...Self.tagPool.count - 1)]
        try store.apply(
          table: "items", pk: pk, op: .update,
          transforms: ["tags": ["op": "arrayRemove", "values": [.string(tag)]]])
      case 3:
        try store.apply(
          table: "items", pk: pk, op: .update, columns: ["title": .string("t\(random.int(0...999))")])
      case 4:
        try items.findByID(pk).update { d in
          d?["meta"]["k\(random.int(0...2))"].set(.number(String(random.int(0...99))))
        }
      default:
        try items.findByID(pk).update { d in d?["meta"]["k\(random.int(0...2))"].remove() }
      }
    } else {
      let pk = Self.chaos[random.int(0...Self.chaos.count - 1)]
      let exists = try items.findByID(pk).exec() != nil
      switch random.int(0...2) {
      case 0:
        try store.apply(
          table: "items", pk: pk, op: exists ? .upsert : .insert,
          columns: ["title": .string("c\(random.int(0...99))")])
      case 1:
        try store.apply(table: "items", pk: pk, op: .remove)
      default:
        try store.apply(
          table: "items", pk: pk, op: .update,
          columns: ["note": .string("n\(random.int(0...99))")],
          transforms: ["views": ["op": "increment", "by": 1]])
      }
    }
  }

  /// Checks the stable documents against a model built from every op in
  /// every log, replayed in HLC order with plain set and last-writer rules.
  func checkInvariants(_ store: Store, increments: [String: DecimalInteger], seed: UInt64) throws {
    var ops: [HLC: Op] = [:]
    for entry in try OpLog.allEntries(root: store.rootPath) { ops[entry.op.hlc] = entry.op }
    let sorted = ops.values.sorted { $0.hlc < $1.hlc }
    for pk in Self.stable {
      let document = try #require(
        try store.collection("items").findByID(pk).exec(), "seed \(seed): \(pk) missing")
      let expectedViews = increments[pk] ?? DecimalInteger(0)
      let views: DecimalInteger? =
        switch document.value["views"] {
        case .number(let text)?, .string(let text)?: DecimalInteger(text)
        default: nil
        }
      #expect(
        views == expectedViews,
        "seed \(seed): \(pk).views is \(String(describing: views)), increments sum to \(expectedViews)")
      var tags = Set<String>()
      var title: JSONValue? = .string("start")
      for op in sorted where op.table == "items" && op.pk == pk {
        for assignment in op.mutation.assignments where assignment.path.description == "title" {
          title = assignment.value
        }
        for entry in op.mutation.transforms where entry.path.description == "tags" {
          switch entry.transform {
          case .arrayUnion(let values): for v in values { if let s = v.stringValue { tags.insert(s) } }
          case .arrayRemove(let values): for v in values { if let s = v.stringValue { tags.remove(s) } }
          default: break
          }
        }
      }
      let actualTags = Set((document.value["tags"]?.arrayValue ?? []).compactMap(\.stringValue))
      #expect(
        actualTags == tags, "seed \(seed): \(pk).tags is \(actualTags.sorted()), the ops say \(tags.sorted())"
      )
      #expect(document.value["title"] == title, "seed \(seed): \(pk).title: the latest assignment must win")
    }
  }

  /// Every replica lists the same conflicts, from the same record files, and
  /// for the stable documents they are what a model of the ops says: for a
  /// lost assignment X, the concurrent later assignments to an overlapping
  /// path that changed the value there (each a record), open while no other
  /// later op touches that path.
  func checkConflicts(_ replicas: [Store], seen: [HLC: Set<HLC>], seed: UInt64) throws {
    let lists = try replicas.map { try $0.conflicts() }
    let files = try replicas.map { (try FileSystem.list($0.rootPath + "/" + Conflict.folder) ?? []).sorted() }
    for r in 1..<replicas.count {
      #expect(lists[r] == lists[0], "seed \(seed): r\(r) lists other conflicts than r0")
      #expect(files[r] == files[0], "seed \(seed): r\(r) holds other conflict records than r0")
    }
    var ops: [HLC: Op] = [:]
    for entry in try OpLog.allEntries(root: replicas[0].rootPath) { ops[entry.op.hlc] = entry.op }
    let sorted = ops.values.sorted { $0.hlc < $1.hlc }
    func concurrent(_ a: HLC, _ b: HLC) -> Bool {
      guard let sa = seen[a], let sb = seen[b] else { return false }  // the seeded inserts: seen by all
      return !sa.contains(b) && !sb.contains(a)
    }
    func value(_ v: JSONValue?, at segments: ArraySlice<String>) -> JSONValue? {
      var current = v
      for segment in segments {
        guard case .object(let o)? = current else { return nil }
        current = o[segment]
      }
      return current
    }
    struct Loss: Hashable {
      var pk: String
      var path: String
      var loser: HLC
    }
    var expected = Set<String>()
    for pk in Self.stable {
      let docOps = sorted.filter { $0.table == "items" && $0.pk == pk }
      var records: [Loss: [HLC]] = [:]
      for (i, x) in docOps.enumerated() {
        for a in x.mutation.assignments where !["views", "tags"].contains(a.path.column) {
          for z in docOps[(i + 1)...] where concurrent(x.hlc, z.hlc) {
            for b in z.mutation.assignments {
              let (path, lost, won): (FieldPath, JSONValue?, JSONValue?)
              if a.path.hasPrefix(b.path) {
                (path, lost, won) = (
                  a.path, a.value, value(b.value, at: a.path.segments.dropFirst(b.path.segments.count))
                )
              } else if b.path.hasPrefix(a.path) {
                (path, lost, won) = (
                  b.path, value(a.value, at: b.path.segments.dropFirst(a.path.segments.count)), b.value
                )
              } else {
                continue
              }
              guard let lost, lost != won else { continue }
              records[Loss(pk: pk, path: path.description, loser: x.hlc), default: []].append(z.hlc)
            }
          }
        }
      }
      for (loss, winners) in records {
        let path = FieldPath(loss.path)
        let settled = docOps.contains { z in
          loss.loser < z.hlc && !winners.contains(z.hlc)
            && z.mutation.assignments.contains { $0.path.hasPrefix(path) || path.hasPrefix($0.path) }
        }
        if !settled { expected.insert("\(loss.pk) \(loss.path) \(loss.loser) \(winners.max()!)") }
      }
    }
    let actual = Set(
      lists[0].filter { Self.stable.contains($0.pk) }.map {
        "\($0.pk) \($0.path) \($0.losingStamp) \($0.winningStamp)"
      })
    #expect(
      actual == expected,
      "seed \(seed): conflicts \(actual.sorted()) but the ops say \(expected.sorted())")
  }
}
