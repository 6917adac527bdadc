import FolioTestSupport
import Foundation
import Glibc
import Testing

/// Many replicas run `folio sync` against one remote at the same moment.
/// Each push that loses the race is retried after another fetch and merge,
/// so no sync fails, every increment counts once, and the replicas end
/// byte-identical. `FOLIO_STORM_REPLICAS` and `FOLIO_STORM_ROUNDS` scale it
/// up (the benchmark's 16 × 10: `folio-bench storm`).
@Suite struct PushStormCLITests {
  enum Transport: String, CaseIterable, CustomTestStringConvertible {
    /// A path: libgit2's local transport writes the remote in place.
    case path
    /// `git daemon`: the smart protocol, as over ssh and https.
    case git
    var testDescription: String { rawValue }
  }

  static let yaml = """
    version: 1
    tables:
      c:
        path: c
        columns:
          n: counter
    """

  static func setting(_ name: String, _ fallback: Int) -> Int {
    ProcessInfo.processInfo.environment[name].flatMap { Int($0) } ?? fallback
  }

  @Test(arguments: Transport.allCases)
  func everySyncLandsWhenAllPushAtOnce(_ transport: Transport) throws {
    let replicas = Self.setting("FOLIO_STORM_REPLICAS", 8)
    let rounds = Self.setting("FOLIO_STORM_ROUNDS", 3)
    let root = try CLIScratch(yaml: nil)
    defer { root.remove() }
    #expect(try FolioRunner.shell("git init -q --bare remote.git", in: root.path) == 0)
    var daemon: GitDaemon?
    defer { daemon?.stop() }
    let url: String
    switch transport {
    case .path: url = root.path + "/remote.git"
    case .git:
      daemon = try GitDaemon(base: root.path)
      url = daemon!.url("remote.git")
    }
    try root.write("r0/folio.yaml", Self.yaml)
    func folio(_ arguments: [String], in replica: String, input: String? = nil) throws {
      let result = try FolioRunner.run(arguments, in: root.path + "/" + replica, input: input)
      #expect(result.status == 0, "folio \(arguments.joined(separator: " ")) in \(replica): \(result.stderr)")
    }
    try folio(["init"], in: "r0")
    try folio(["put", "c", "x", "-"], in: "r0", input: #"{"n":0}"#)
    #expect(try FolioRunner.shell("git remote add origin '\(url)'", in: root.path + "/r0") == 0)
    try folio(["sync"], in: "r0")
    for k in 1..<replicas { try folio(["clone", url, "r\(k)"], in: "") }

    var retries = 0
    for round in 0..<rounds {
      for k in 0..<replicas {
        try folio(
          ["apply", "c", "x", "--op", "update", "--transforms", #"{"n":{"op":"increment","by":1}}"#],
          in: "r\(k)")
        try folio(["put", "c", "r\(k)-\(round)", "-"], in: "r\(k)", input: #"{"n":\#(k)}"#)
      }
      let syncs = try (0..<replicas).map { k in
        try Self.start(["sync", "--json"], in: root.path + "/r\(k)", output: root.path + "/sync-\(k).txt")
      }
      for (k, sync) in syncs.enumerated() {
        sync.waitUntilExit()
        let output = root.read("sync-\(k).txt") ?? ""
        #expect(sync.terminationStatus == 0, "round \(round), r\(k): \(output)")
        #expect(!output.contains("network"), "round \(round), r\(k): \(output)")
        if let range = output.range(of: #""rounds":"#) {
          retries += (Int(output[range.upperBound...].prefix { $0.isNumber }) ?? 1) - 1
        }
      }
    }
    // Two quiet passes bring every replica everything.
    for _ in 0..<2 { for k in 0..<replicas { try folio(["sync"], in: "r\(k)") } }
    let expected = root.read("r0/c/x.json")
    #expect(expected?.contains(#""n": \#(replicas * rounds)"#) == true, "\(expected ?? "nil")")
    let tree = try FolioRunner.shellOutput("git rev-parse HEAD^{tree}", in: root.path + "/r0").output
    for k in 0..<replicas {
      #expect(root.read("r\(k)/c/x.json") == expected, "r\(k) differs")
      #expect(
        try FolioRunner.shellOutput("git rev-parse HEAD^{tree}", in: root.path + "/r\(k)").output == tree)
      #expect(try FolioRunner.shellOutput("git status --porcelain", in: root.path + "/r\(k)").output.isEmpty)
      let names = try FileManager.default.contentsOfDirectory(atPath: root.path + "/r\(k)/c")
      #expect(names.count == 1 + replicas * rounds, "r\(k)")
    }
    print("push storm (\(transport.rawValue)): \(replicas) replicas × \(rounds) rounds, \(retries) retries")
  }

  static func start(_ arguments: [String], in directory: String, output: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    _ = FileManager.default.createFile(atPath: output, contents: nil)
    let handle = FileHandle(forWritingAtPath: output)
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
    return process
  }
}
