import Folio
import FolioCore
import FolioJSON
import FolioTestSupport
import Foundation
import Testing

/// The convergence property test of `ConvergenceTests`, through the built
/// `folio` binary and plain git: three replicas (one made by `folio clone`,
/// one by `git clone` plus `folio init`) mutate at random with `folio apply`
/// and `folio put`, commit with `folio commit`, and exchange work in random
/// order through a bare remote with `git pull --no-rebase` and `git push`
/// (git calls `folio merge-driver` and the post-merge hook), and straight
/// from each other (criss-cross histories), or, in the mixed
/// variant, with `folio sync` for some steps. At the end all replicas pull
/// until they hold the same commit; then every table file is byte-identical,
/// canonical and free of conflict markers, every counter is the sum of its
/// increments, every union survives unless a later remove dropped it, and
/// the latest assignment wins; and every replica holds the same conflict
/// records and lists the same open conflicts, which are what a model
/// computed from the ops and their causality says.
///
/// `FOLIO_GIT_CONVERGENCE_SEEDS=N` runs N seeds per variant (default 3);
/// `FOLIO_TEST_SEED` replays one.
@Suite(.serialized) struct GitConvergenceTests {
  /// How replicas exchange commits.
  enum Transport: String, CustomStringConvertible, CaseIterable {
    /// Only `git pull --no-rebase` and `git push`.
    case git
    /// Some steps `folio sync`, the rest plain git.
    case mixed
    var description: String { rawValue }
  }

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
  static let chaos = ["x0", "x1"]
  static let tagPool = ["a", "b", "c", "d", "e"]
  static let amounts: [Int64] = [1, 7, -3, 2_000_000_000, -2_100_000_000, 3_000_000_000_000]

  static var seeds: [UInt64] {
    let environment = ProcessInfo.processInfo.environment
    if let text = environment["FOLIO_TEST_SEED"], let seed = UInt64(text) { return [seed] }
    let count = Int(environment["FOLIO_GIT_CONVERGENCE_SEEDS"] ?? "") ?? 3
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in generator.next() }
  }

  @Test(arguments: Transport.allCases) func replicasConvergeThroughPlainGit(_ transport: Transport) throws {
    for seed in Self.seeds {
      do {
        var world = try World(seed: seed, transport: transport)
        try world.run()
      } catch {
        Issue.record("\(transport) seed \(seed) (replay with FOLIO_TEST_SEED=\(seed)): \(error)")
        throw error
      }
    }
  }

  /// A failed step of the scenario.
  struct StepFailure: Error, CustomStringConvertible {
    var description: String
  }

  /// One run: the scratch folder, the three replicas and what the test
  /// knows about the increments it made.
  struct World {
    let seed: UInt64
    let transport: Transport
    let root: CLIScratch
    var random: SplitMix
    var increments: [String: DecimalInteger] = [:]
    /// Causality, as the test sees it: the ops each op's replica held when
    /// it was made. The conflict model is built from this, not from merges.
    var seen: [HLC: Set<HLC>] = [:]
    let replicas = ["r0", "r1", "r2"]

    init(seed: UInt64, transport: Transport) throws {
      self.seed = seed
      self.transport = transport
      random = SplitMix(seed: seed)
      root = try CLIScratch(yaml: nil)
    }

    var context: String { "\(transport) seed \(seed)" }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }
    mutating func pick<T>(_ list: [T]) -> T { list[int(0...list.count - 1)] }

    /// Runs `folio ARGS` in `replica` and fails the step unless it exits 0.
    @discardableResult
    func folio(_ arguments: [String], in replica: String, input: String? = nil) throws -> String {
      let result = try FolioRunner.run(arguments, in: root.path + "/" + replica, input: input)
      guard result.status == 0 else {
        throw StepFailure(
          description: "\(replica): folio \(arguments.joined(separator: " ")) exited \(result.status): "
            + result.stderr)
      }
      return result.stdout
    }

    /// Runs `git COMMAND` in `replica`; unless `mayFail`, fails the step when
    /// git does.
    @discardableResult
    func git(_ command: String, in replica: String, mayFail: Bool = false) throws -> Int32 {
      let (status, output) = try shellGit(command, in: root.path + "/" + replica)
      if status != 0 && !mayFail {
        throw StepFailure(description: "\(replica): git \(command) exited \(status): \(output)")
      }
      return status
    }

    func head(_ replica: String) throws -> String {
      try FolioRunner.shellOutput("git rev-parse HEAD", in: root.path + "/" + replica).output
        .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    mutating func run() throws {
      defer { root.remove() }
      try FolioRunner.shell("git init -q --bare remote.git", in: root.path)
      try root.write("r0/folio.yaml", GitConvergenceTests.yaml)
      try folio(["init"], in: "r0")
      for pk in GitConvergenceTests.stable {
        try folio(
          [
            "apply", "items", pk, "--op", "insert", "--columns",
            #"{"views": 0, "tags": [], "title": "start", "meta": {}}"#,
          ], in: "r0")
      }
      try folio(["commit", "-m", "seed"], in: "r0")
      try git("remote add origin ../remote.git", in: "r0")
      try git("push -q origin main", in: "r0")
      try folio(["clone", root.path + "/remote.git", "r1"], in: "")
      try FolioRunner.shell("git clone -q -b main remote.git r2 2>/dev/null", in: root.path)
      try folio(["init"], in: "r2")
      // Each replica can also pull straight from the others, which makes
      // criss-cross histories.
      for replica in replicas {
        for peer in replicas where peer != replica { try git("remote add \(peer) ../\(peer)", in: replica) }
      }

      for _ in 0..<50 {
        let replica = pick(replicas)
        if chance(55) {
          try mutate(replica)
        } else {
          try exchange(replica)
        }
      }
      // Everyone publishes and pulls until all hold the remote's commit.
      for replica in replicas { try folio(["commit"], in: replica) }
      var settled = false
      for _ in 0..<4 where !settled {
        for replica in replicas { try pullAndPush(replica, mustPush: true) }
        let remote = try FolioRunner.shellOutput("git rev-parse main", in: root.path + "/remote.git").output
          .trimmingCharacters(in: .whitespacesAndNewlines)
        settled = try replicas.allSatisfy { try head($0) == remote }
      }
      #expect(settled, "\(context): replicas never reached one commit")
      try check()
    }

    /// One random mutation through the CLI, and what its replica had seen.
    mutating func mutate(_ replica: String) throws {
      let folder = root.path + "/" + replica
      let known = Set(try OpLog.allEntries(root: folder).map(\.op.hlc))
      try mutateOnce(replica)
      for entry in try OpLog.allEntries(root: folder) where !known.contains(entry.op.hlc) {
        seen[entry.op.hlc] = known
      }
    }

    mutating func mutateOnce(_ replica: String) throws {
      if chance(60) {
        let pk = pick(GitConvergenceTests.stable)
        switch int(0...6) {
        case 0:
          let by = pick(GitConvergenceTests.amounts)
          try folio(transform(pk, #""views": {"op": "increment", "by": \#(by)}"#), in: replica)
          increments[pk] = (increments[pk] ?? DecimalInteger(0)) + DecimalInteger(Int(by))
        case 1:
          let tag = pick(GitConvergenceTests.tagPool)
          try folio(transform(pk, #""tags": {"op": "arrayUnion", "values": ["\#(tag)"]}"#), in: replica)
        case 2:
          let tag = pick(GitConvergenceTests.tagPool)
          try folio(transform(pk, #""tags": {"op": "arrayRemove", "values": ["\#(tag)"]}"#), in: replica)
        case 3:
          let column = chance(70) ? "title" : "note"
          try folio(
            ["apply", "items", pk, "--op", "update", "--columns", #"{"\#(column)": "t\#(int(0...999))"}"#],
            in: replica)
        case 4:
          // A nested path: `folio put` records the diff as `meta.kN`.
          let key = "k\(int(0...2))"
          let value = int(0...99)
          try edit(pk, in: replica) { object in
            guard case .object(var meta)? = object["meta"] else { return }
            meta[key] = .number(String(value))
            object["meta"] = .object(meta)
          }
        case 5:
          let key = "k\(int(0...2))"
          try edit(pk, in: replica) { object in
            guard case .object(var meta)? = object["meta"] else { return }
            meta[key] = nil
            object["meta"] = .object(meta)
          }
        default:
          try edit(pk, in: replica) { object in object["note"] = nil }  // an unset
        }
      } else {
        let pk = pick(GitConvergenceTests.chaos)
        let exists = FileManager.default.fileExists(atPath: root.path + "/\(replica)/items/\(pk).json")
        switch int(0...2) {
        case 0:
          try folio(
            [
              "apply", "items", pk, "--op", exists ? "upsert" : "insert", "--columns",
              #"{"title": "c\#(int(0...99))"}"#,
            ], in: replica)
        case 1:
          try folio(["apply", "items", pk, "--op", "remove"], in: replica)
        default:
          try folio(
            [
              "apply", "items", pk, "--op", "update", "--columns", #"{"note": "n\#(int(0...99))"}"#,
              "--transforms", #"{"views": {"op": "increment", "by": 1}}"#,
            ], in: replica)
        }
      }
    }

    func transform(_ pk: String, _ body: String) -> [String] {
      ["apply", "items", pk, "--op", "update", "--transforms", "{" + body + "}"]
    }

    /// Reads a document with `folio get`, changes it, and writes it back
    /// with `folio put`, which records the change as a diff by path.
    func edit(_ pk: String, in replica: String, _ change: (inout JSONObject) -> Void) throws {
      let text = try folio(["get", "items", pk], in: replica)
      guard case .object(var object) = try JSONValue(parsing: text) else { return }
      change(&object)
      let bytes = JSONValue.object(object).canonicalBytes()
      try folio(["put", "items", pk, "-"], in: replica, input: String(decoding: bytes, as: UTF8.self))
    }

    /// Commits and trades commits with the remote: pull and push, pull
    /// only, or push only (which the remote may refuse), by plain git or,
    /// in the mixed variant sometimes, by `folio sync`.
    mutating func exchange(_ replica: String) throws {
      let peer = pick(replicas.filter { $0 != replica })
      if transport == .mixed && chance(40) {
        if chance(25) {
          try folio(["sync", peer, "--no-push"], in: replica)
        } else {
          try folio(chance(70) ? ["sync"] : ["sync", "--no-push"], in: replica)
        }
        return
      }
      try folio(["commit"], in: replica)
      switch int(0...3) {
      case 0: try pullAndPush(replica, mustPush: true)
      case 1: try pull(replica)
      case 2: try pull(replica, from: peer)
      default: try git("push -q origin main", in: replica, mayFail: true)
      }
    }

    mutating func pullAndPush(_ replica: String, mustPush: Bool) throws {
      if transport == .mixed && chance(40) {
        try folio(["sync"], in: replica)
        return
      }
      try pull(replica)
      try git("push -q origin main", in: replica, mayFail: !mustPush)
    }

    /// `git pull --no-rebase`. git hands a document removed on one side and
    /// changed on the other to no driver: it stops with `CONFLICT
    /// (modify/delete)`, and `folio commit` concludes the merge by replay.
    func pull(_ replica: String, from remote: String = "origin") throws {
      let command = "git pull -q --no-rebase --no-edit \(remote) main"
      let (status, output) = try FolioRunner.shellOutput(command, in: root.path + "/" + replica)
      guard status != 0 else { return }
      let lines = output.split(separator: "\n").filter { $0.hasPrefix("CONFLICT") }
      guard !lines.isEmpty, lines.allSatisfy({ $0.hasPrefix("CONFLICT (modify/delete)") }) else {
        throw StepFailure(description: "\(replica): \(command) exited \(status): \(output)")
      }
      try folio(["commit"], in: replica)
      let state = try FolioRunner.shellOutput(
        "git rev-parse -q --verify MERGE_HEAD", in: root.path + "/" + replica)
      #expect(state.status != 0, "\(context): \(replica): folio commit left the git merge open")
      #expect(
        try FolioRunner.shellOutput("git rev-parse -q --verify HEAD^2", in: root.path + "/" + replica).status
          == 0,
        "\(context): \(replica): the merge commit has no second parent")
    }

    /// The table files of `replica`, by name.
    func tableFiles(_ replica: String) throws -> [String: [UInt8]] {
      let folder = root.path + "/\(replica)/items"
      var files: [String: [UInt8]] = [:]
      for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
        files[name] = Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
      }
      return files
    }

    func check() throws {
      let tables = try replicas.map(tableFiles)
      #expect(tables[0] == tables[1], "\(context): r0 and r1 differ")
      #expect(tables[0] == tables[2], "\(context): r0 and r2 differ")
      for (r, files) in tables.enumerated() {
        for (name, bytes) in files.sorted(by: { $0.key < $1.key }) {
          #expect(
            !ConvergenceMarkers.hasConflictMarker(bytes), "\(context): r\(r) \(name) holds conflict markers")
          let value = try #require(try? JSONValue(parsing: bytes), "\(context): r\(r) \(name) is not JSON")
          #expect(value.canonicalBytes() == bytes, "\(context): r\(r) \(name) is not canonical")
        }
        let status = try FolioRunner.shellOutput("git status --porcelain", in: root.path + "/r\(r)")
        #expect(status.output.isEmpty, "\(context): r\(r) is not clean: \(status.output)")
        let fsck = try FolioRunner.run(["fsck"], in: root.path + "/r\(r)")
        #expect(fsck.status == 0, "\(context): r\(r): folio fsck: \(fsck.stderr)")
      }
      try checkInvariants()
      try checkConflicts()
    }

    /// The same records and the same open conflicts on every replica, and
    /// for the stable documents what a model of the ops says: for a lost
    /// assignment X, each later assignment concurrent with it (neither
    /// replica had seen the other) to an overlapping path that changed the
    /// value there is a record; the loss stays open while no other later op
    /// touches that path.
    func checkConflicts() throws {
      let lists = try replicas.map { try folio(["conflicts", "--json"], in: $0) }
      let records = replicas.map {
        ((try? FileManager.default.contentsOfDirectory(atPath: root.path + "/\($0)/.folio/conflicts")) ?? [])
          .sorted()
      }
      for r in 1..<replicas.count {
        #expect(lists[r] == lists[0], "\(context): r\(r) lists other conflicts than r0")
        #expect(records[r] == records[0], "\(context): r\(r) holds other conflict records than r0")
      }
      var ops: [HLC: Op] = [:]
      for entry in try OpLog.allEntries(root: root.path + "/r0") { ops[entry.op.hlc] = entry.op }
      let sorted = ops.values.sorted { $0.hlc < $1.hlc }
      func concurrent(_ a: HLC, _ b: HLC) -> Bool {
        guard let sa = seen[a], let sb = seen[b] else { return false }  // the seed: seen by all
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
      var expected = Set<String>()
      for pk in GitConvergenceTests.stable {
        let docOps = sorted.filter { $0.table == "items" && $0.pk == pk }
        var losses: [String: (path: FieldPath, loser: HLC, winners: [HLC])] = [:]
        for (i, x) in docOps.enumerated() {
          for a in x.mutation.assignments where !["views", "tags"].contains(a.path.column) {
            for z in docOps[(i + 1)...] where concurrent(x.hlc, z.hlc) {
              for b in z.mutation.assignments {
                let (path, lost, won): (FieldPath, JSONValue?, JSONValue?)
                if a.path.hasPrefix(b.path) {
                  let rest = a.path.segments.dropFirst(b.path.segments.count)
                  (path, lost, won) = (a.path, a.value, value(b.value, at: rest))
                } else if b.path.hasPrefix(a.path) {
                  let rest = b.path.segments.dropFirst(a.path.segments.count)
                  (path, lost, won) = (b.path, value(a.value, at: rest), b.value)
                } else {
                  continue
                }
                guard let lost, lost != won else { continue }
                losses["\(path) \(x.hlc)", default: (path, x.hlc, [])].winners.append(z.hlc)
              }
            }
          }
        }
        for loss in losses.values {
          let settled = docOps.contains { z in
            loss.loser < z.hlc && !loss.winners.contains(z.hlc)
              && z.mutation.assignments.contains {
                $0.path.hasPrefix(loss.path) || loss.path.hasPrefix($0.path)
              }
          }
          if !settled { expected.insert("\(pk) \(loss.path) \(loss.loser) \(loss.winners.max()!)") }
        }
      }
      var actual = Set<String>()
      for line in lists[0].split(separator: "\n") {
        let conflict = try JSONValue(parsing: String(line))
        guard let pk = conflict["pk"]?.stringValue, GitConvergenceTests.stable.contains(pk) else { continue }
        let path = conflict["path"]?.stringValue ?? "?"
        let loser = conflict["loser"]?["stamp"]?.stringValue ?? "?"
        let winner = conflict["winner"]?["stamp"]?.stringValue ?? "?"
        actual.insert("\(pk) \(path) \(loser) \(winner)")
      }
      #expect(
        actual == expected, "\(context): conflicts \(actual.sorted()) but the ops say \(expected.sorted())")
    }

    /// Checks the stable documents against a model built from every op in
    /// every log, replayed in HLC order with plain set and last-writer rules.
    func checkInvariants() throws {
      var ops: [HLC: Op] = [:]
      for entry in try OpLog.allEntries(root: root.path + "/r0") { ops[entry.op.hlc] = entry.op }
      let sorted = ops.values.sorted { $0.hlc < $1.hlc }
      let files = try tableFiles("r0")
      for pk in GitConvergenceTests.stable {
        let bytes = try #require(files[pk + ".json"], "\(context): \(pk) missing")
        let document = try JSONValue(parsing: bytes)
        let expectedViews = increments[pk] ?? DecimalInteger(0)
        let views: DecimalInteger? =
          switch document["views"] {
          case .number(let text)?, .string(let text)?: DecimalInteger(text)
          default: nil
          }
        #expect(
          views == expectedViews,
          "\(context): \(pk).views is \(String(describing: views)), increments sum to \(expectedViews)")
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
        let actualTags = Set((document["tags"]?.arrayValue ?? []).compactMap(\.stringValue))
        #expect(
          actualTags == tags, "\(context): \(pk).tags is \(actualTags.sorted()), the ops say \(tags.sorted())"
        )
        #expect(document["title"] == title, "\(context): \(pk).title: the latest assignment must win")
      }
    }
  }
}

/// git's conflict markers at the start of a line.
enum ConvergenceMarkers {
  static func hasConflictMarker(_ bytes: [UInt8]) -> Bool {
    let text = String(decoding: bytes, as: UTF8.self)
    return text.split(separator: "\n").contains { line in
      ["<<<<<<<", "=======", ">>>>>>>", "|||||||"].contains { line.hasPrefix($0) }
    }
  }
}
