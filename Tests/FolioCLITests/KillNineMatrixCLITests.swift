import FolioTestSupport
import Foundation
import Glibc
import Testing

/// `kill -9`, `SIGTERM` or `SIGINT`, sent to `folio sync`, `clone`,
/// `commit`, `import` and `compact` alone (not to its process group) at
/// random moments. After every kill no git the command started is left
/// running, a plain rerun of the same command finishes the job with no
/// cleanup by hand, no temporary file of Folio's is left, `fsck` is clean,
/// and every counter equals the sum of its increments: none lost, none
/// counted twice. (Before git was tied to Folio, an orphaned `git fetch`
/// raced the rerun for its ref lock.)
///
/// The first run of each command is not killed; it measures how long the
/// command takes, and each later kill lands at a random moment within that
/// time (so that kills fall early, late and in between, whatever the
/// machine's load). Every expectation prints the seed; `FOLIO_TEST_SEED`
/// replays it and `FOLIO_CRASH_ROUNDS` (default 4) sets the runs per
/// command: 21 makes 100 kills over the five commands.
@Suite struct KillNineMatrixCLITests {
  enum Command: String, CaseIterable, CustomTestStringConvertible {
    case sync, clone, commit, `import`, compact
    var testDescription: String { rawValue }
  }

  /// Two replicas of one remote: `a` (made here) and `b` (cloned).
  struct Replicas {
    let box: GitPullTests.Sandbox
    let seed: UInt64
    /// The counter's expected value.
    var views = 0
    /// How many todos exist.
    var documents = 1

    init(seed: UInt64) throws {
      self.seed = seed
      box = try GitPullTests.Sandbox(context: "seed \(seed)")
      try FolioRunner.shell("git init -q --bare remote.git", in: box.root.path)
      try box.root.write("a/folio.yaml", SyncCrashTests.yaml)
      try box.folio(["init"], in: "a")
      try box.folio(["put", "todos", "n", "-"], in: "a", input: #"{"views": 0}"#)
      #expect(try box.git("remote add origin \(box.remote)", in: "a") == 0, "seed \(seed)")
      try box.folio(["sync"], in: "a")
      try box.folio(["clone", box.remote, "b"], in: "")
    }

    var path: String { box.root.path }

    func run(_ arguments: [String], in replica: String, input: String? = nil) throws {
      let result = try FolioRunner.run(arguments, in: path + "/" + replica, input: input)
      #expect(
        result.status == 0,
        "seed \(seed): folio \(arguments.joined(separator: " ")) in \(replica): \(result.stderr)")
    }

    /// Raises the counter in `replica` `times` times, one op each.
    mutating func increment(in replica: String, times: Int) throws {
      for _ in 0..<times {
        try run(
          ["apply", "todos", "n", "--op", "update", "--transforms", #"{"views":{"op":"increment","by":1}}"#],
          in: replica)
      }
      views += times
    }

    /// `fsck` is clean and nothing is left pending in `replica`.
    func expectWhole(_ replica: String, _ context: String) throws {
      let fsck = try FolioRunner.run(["fsck"], in: path + "/" + replica)
      #expect(fsck.status == 0, "seed \(seed), \(context): fsck in \(replica): \(fsck.stdout) \(fsck.stderr)")
      let status = try FolioRunner.shellOutput("git status --porcelain", in: path + "/" + replica)
      #expect(status.output.isEmpty, "seed \(seed), \(context): \(replica) has changes: \(status.output)")
    }

    /// The counter as `replica` has it on disk.
    func views(in replica: String) -> Int? {
      guard let text = box.file(replica + "/todos/n.json"), let range = text.range(of: #""views": "#) else {
        return nil
      }
      return Int(text[range.upperBound...].prefix { $0.isNumber })
    }
  }

  @Test(arguments: Command.allCases)
  func killNineThenRerunFinishes(_ command: Command) throws {
    let seed = testSeed()
    var random = SplitMix(seed: seed)
    let rounds = ProcessInfo.processInfo.environment["FOLIO_CRASH_ROUNDS"].flatMap { Int($0) } ?? 4
    var replicas = try Replicas(seed: seed)
    defer { replicas.box.root.remove() }
    var duration = 0.0
    for round in 0..<rounds {
      // The work the command will do, and the command itself.
      let arguments: [String]
      var replica = "b"
      switch command {
      case .sync:
        try replicas.increment(in: "a", times: 3)
        try replicas.run(["sync"], in: "a")
        try replicas.increment(in: "b", times: 3)
        for k in 0..<40 {
          try replicas.box.root.write(
            "b/todos/s\(round)-\(k).json", #"{"id": "s\#(round)-\#(k)", "k": \#(k)}"#)
        }
        replicas.documents += 40
        arguments = ["sync"]
      case .clone:
        replica = "c\(round)"
        arguments = ["clone", replicas.box.remote, replica]
      case .commit:
        try replicas.increment(in: "b", times: 3)
        // Saved as an editor saves: a new file, renamed over the name.
        for k in 0..<150 {
          try replicas.box.root.write(
            "b/todos/.c\(round)-\(k).json.swp", #"{"id": "c\#(round)-\#(k)", "k": \#(k)}"#)
          rename(
            replicas.path + "/b/todos/.c\(round)-\(k).json.swp",
            replicas.path + "/b/todos/c\(round)-\(k).json")
        }
        replicas.documents += 150
        arguments = ["commit"]
      case .import:
        var rows = ""
        for k in 0..<3_000 { rows += #"{"id":"i\#(round)-\#(k)","k":\#(k),"s":"\#(k)-\#(round)"}"# + "\n" }
        try replicas.box.root.write("rows-\(round).ndjson", rows)
        replicas.documents += 3_000
        arguments = ["import", "todos", replicas.path + "/rows-\(round).ndjson"]
      case .compact:
        try replicas.increment(in: "b", times: 20)
        try replicas.run(["sync"], in: "b")
        arguments = ["compact"]
      }
      let directory = replicas.path + "/" + (command == .clone ? "" : replica)
      let context = "\(command) round \(round)"
      if round == 0 {
        let start = ProcessInfo.processInfo.systemUptime
        try replicas.run(arguments, in: command == .clone ? "" : replica)
        duration = ProcessInfo.processInfo.systemUptime - start
      } else {
        let process = try Self.start(arguments, in: directory)
        pause(seconds: Double(random.next() % 1_000) / 1_000 * duration)
        let signal = [SIGKILL, SIGTERM, SIGINT][Int(random.next() % 3)]
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        // A git the command started dies with it.
        let gone = eventually { Self.gitProcesses(under: replicas.path).isEmpty }
        #expect(
          gone,
          "seed \(seed), \(context), signal \(signal): git left running: \(Self.gitProcesses(under: replicas.path))"
        )
        let rerun = try FolioRunner.run(arguments, in: directory)
        #expect(
          rerun.status == 0, "seed \(seed), \(context), signal \(signal): the rerun failed: \(rerun.stderr)")
        let left = Self.temporaryFiles(under: replicas.path)
        #expect(left.isEmpty, "seed \(seed), \(context), signal \(signal): left behind: \(left)")
      }
      try replicas.expectWhole(replica, context)
      #expect(
        replicas.views(in: replica) == replicas.views(in: command == .clone ? "a" : replica),
        "seed \(seed), \(context)")
      if command != .clone {
        #expect(replicas.views(in: replica) == replicas.views, "seed \(seed), \(context): the counter")
      }
    }
    // Everything reaches the other side, once.
    try replicas.run(["sync"], in: "b")
    try replicas.run(["sync"], in: "a")
    try replicas.expectWhole("a", "\(command), after")
    #expect(replicas.views(in: "a") == replicas.views, "seed \(seed), \(command): a's counter")
    #expect(replicas.views(in: "b") == replicas.views, "seed \(seed), \(command): b's counter")
    if command != .clone {
      let files = try FileManager.default.contentsOfDirectory(atPath: replicas.path + "/a/todos")
      #expect(files.filter { $0.hasSuffix(".json") }.count == replicas.documents, "seed \(seed), \(command)")
    }
  }

  /// The git processes whose working directory lies under `root`.
  static func gitProcesses(under root: String) -> [String] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { pid -> String? in
      guard Int32(pid) != nil,
        let cwd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd"),
        cwd == root || cwd.hasPrefix(root + "/"),
        let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
      else { return nil }
      let command = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
      guard let name = command.first, name == "git" || name.hasSuffix("/git") || name.hasPrefix("git-")
      else { return nil }
      return "\(pid): \(command.joined(separator: " "))"
    }
  }

  /// Temporary files Folio makes and must never leave behind: its
  /// `.NAME.folio-tmp` files, its unfinished packs, and a clone's staging
  /// folder.
  static func temporaryFiles(under root: String) -> [String] {
    var found: [String] = []
    guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
    while let relative = walker.nextObject() as? String {
      let name = (relative as NSString).lastPathComponent
      if name.hasSuffix(".folio-tmp") || name.contains(".folio-clone-")
        || GitPackNames.isLeftover(name)
      {
        found.append(relative)
      }
    }
    return found
  }

  /// The names a pack writer gives its files while it works.
  enum GitPackNames {
    static func isLeftover(_ name: String) -> Bool {
      ["tmp_folio_", "tmp_idx_", ".tmp_idx_"].contains { name.hasPrefix($0) }
    }
  }

  static func start(_ arguments: [String], in directory: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
  }
}
