import FolioTestSupport
import Foundation
import Testing

/// `folio apply` run as separate processes while `folio sync` merges and
/// pushes: the store lock makes them wait their turn, nothing is lost, and
/// a rerun of sync converges.
@Suite struct ConcurrentSyncCLITests {
  static let yaml = """
    version: 1
    tables:
      todos:
        path: todos
        columns:
          views: counter
    """

  @Test func applyProcessesDuringSyncLoseNothing() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    let pks = (0..<12).map { "d\($0)" }
    try FolioRunner.shell("git init -q --bare remote.git", in: box.root.path)
    try box.root.write("a/folio.yaml", Self.yaml)
    try box.folio(["init"], in: "a")
    for pk in pks { try box.root.write("a/todos/\(pk).json", #"{"id": "\#(pk)", "views": 0}"#) }
    #expect(try box.git("remote add origin \(box.remote)", in: "a") == 0)
    try box.folio(["sync"], in: "a")
    try box.folio(["clone", box.remote, "b"], in: "")
    var expected = 0
    func raise(_ by: Int) -> String {
      "'" + #"{"views":{"op":"increment","by":\#(by)}}"# + "'"
    }
    for round in 0..<3 {
      // a publishes a change to every document, so b's sync has a merge to do.
      let all = pks.map { "\"\(FolioRunner.binary)\" apply todos \($0) --op update --transforms \(raise(1))" }
      #expect(
        try FolioRunner.shell(all.joined(separator: " && ") + " >/dev/null", in: box.root.path + "/a") == 0)
      expected += pks.count
      try box.folio(
        [
          "apply", "todos", "d0", "--op", "update", "--transforms", #"{"views":{"op":"increment","by":100}}"#,
        ], in: "b")
      expected += 100
      // b: a sync and a loop of apply processes, started together.
      let perRound = 15
      let loop = (0..<perRound).map {
        "\"\(FolioRunner.binary)\" apply todos \(pks[($0 * 7 + round) % pks.count]) --op update --transforms \(raise(10)) >/dev/null || exit 1"
      }.joined(separator: "\n")
      let writer = try start("/bin/sh", ["-c", loop], in: box.root.path + "/b")
      let sync = try start(FolioRunner.binary, ["sync"], in: box.root.path + "/b")
      writer.waitUntilExit()
      sync.waitUntilExit()
      expected += perRound * 10
      #expect(writer.terminationStatus == 0, "round \(round): an apply failed")
      #expect(sync.terminationStatus == 0, "round \(round): the sync failed")
      try box.folio(["sync"], in: "b")
      try box.folio(["sync"], in: "a")
    }
    try box.folio(["sync"], in: "b")
    var total = 0
    for pk in pks {
      let a = try #require(box.file("a/todos/\(pk).json"))
      #expect(a == box.file("b/todos/\(pk).json"), "\(pk) differs")
      if let range = a.range(of: #""views": "#) {
        total += Int(a[range.upperBound...].prefix { $0.isNumber }) ?? 0
      }
    }
    #expect(total == expected, "counters sum to \(total), increments to \(expected)")
    #expect(try box.git("diff --quiet HEAD", in: "a") == 0)
    #expect(try box.git("diff --quiet HEAD", in: "b") == 0)
  }

  private func start(_ executable: String, _ arguments: [String], in directory: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
  }
}
