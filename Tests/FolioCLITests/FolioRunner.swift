import FolioTestSupport
import Foundation

/// Runs the built `folio` binary and captures what it prints.
struct FolioRunner {
  struct Result {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  /// The `folio` binary that SwiftPM built next to this test bundle.
  static let binary: String = {
    // Every test that starts the binary comes here first; processes started
    // without `run` (a Process of their own) inherit this, so none of them
    // leaves an index daemon behind either.
    setenv("FOLIO_INDEX_DAEMON", "off", 1)
    let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return exe.deletingLastPathComponent().appendingPathComponent("folio").path
  }()

  /// Runs `folio ARGS` in `directory`, feeding `input` on stdin.
  @discardableResult
  static func run(
    _ arguments: [String], in directory: String, input: String? = nil, environment: [String: String] = [:]
  ) throws -> Result {
    try execute(
      binary, arguments, in: directory, input: input.map { Data($0.utf8) }, environment: environment)
  }

  /// Runs `executable ARGS` in `directory` (a reference program, a
  /// peer), feeding `input` on stdin, and collects what it prints.
  static func execute(
    _ executable: String, _ arguments: [String], in directory: String, input: Data? = nil,
    environment: [String: String] = [:]
  ) throws -> Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    var env = ProcessInfo.processInfo.environment
    // No test leaves an index daemon behind: those that want one say so.
    env["FOLIO_INDEX_DAEMON"] = "off"
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let stdout = Pipe()
    let stderr = Pipe()
    let stdin = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    process.standardInput = stdin
    try process.run()
    if let input { stdin.fileHandleForWriting.write(input) }
    try stdin.fileHandleForWriting.close()
    let errorData = Mutexed<Data>(Data())
    let readAll = DispatchSemaphore(value: 0)
    let reader = Thread {
      errorData.set(stderr.fileHandleForReading.readDataToEndOfFile())
      readAll.signal()
    }
    reader.start()
    let out = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    // stderr's end: the process has exited, so its end comes.
    readAll.wait()
    return Result(
      status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
      stderr: String(decoding: errorData.value, as: UTF8.self))
  }

  /// Runs a shell command (for git and editors) and returns its status.
  @discardableResult
  static func shell(_ command: String, in directory: String) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
  }

  /// Runs a shell command and returns its status and what it printed
  /// (stdout and stderr together).
  static func shellOutput(_ command: String, in directory: String) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command + " 2>&1"]
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    var env = ProcessInfo.processInfo.environment
    for key in ["GIT_AUTHOR", "GIT_COMMITTER"] {
      env[key + "_NAME"] = "t"
      env[key + "_EMAIL"] = "t@t"
    }
    process.environment = env
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
  }
}

/// A value handed from a reader thread, guarded by a lock.
final class Mutexed<T>: @unchecked Sendable {
  // @unchecked: all state is guarded by `lock`.
  private let lock = NSLock()
  private var stored: T
  private var done = false
  init(_ value: T) { stored = value }
  func set(_ value: T) {
    lock.lock()
    stored = value
    done = true
    lock.unlock()
  }
  var isSet: Bool {
    lock.lock()
    defer { lock.unlock() }
    return done
  }
  var value: T {
    lock.lock()
    defer { lock.unlock() }
    return stored
  }
}

/// A scratch store for end-to-end tests.
struct CLIScratch {
  let path: String

  init(yaml: String? = CLIScratch.yaml) throws {
    let template = NSTemporaryDirectory() + "/folio-cli-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: template, withIntermediateDirectories: true)
    path = URL(fileURLWithPath: template).resolvingSymlinksInPath().path
    if let yaml { try write("folio.yaml", yaml) }
  }

  static let yaml = """
    version: 1
    tables:
      todos:
        path: data/todos
        order: [lastUpdate]
        columns:
          views: counter
          tags: set
    """

  /// ``yaml`` with a `notes` table, where a ``LiveQueryFence`` keeps its
  /// marker out of the live queries of `todos` under test.
  static let yamlWithNotes = yaml + "\n  notes:\n    path: data/notes\n"

  func remove() { try? FileManager.default.removeItem(atPath: path) }

  func write(_ relative: String, _ text: String) throws {
    let full = path + "/" + relative
    try FileManager.default.createDirectory(
      atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try text.write(toFile: full, atomically: false, encoding: .utf8)
  }

  func read(_ relative: String) -> String? {
    try? String(contentsOfFile: path + "/" + relative, encoding: .utf8)
  }

  @discardableResult
  func folio(_ arguments: String..., input: String? = nil) throws -> FolioRunner.Result {
    try FolioRunner.run(arguments, in: path, input: input)
  }

  /// Runs `git ARGUMENTS` (a shell command line) in the scratch folder.
  /// - Returns: what it wrote to stdout and stderr.
  func git(_ arguments: String) throws -> String {
    try shellGit(arguments, in: path).output
  }
}

extension CLIScratch {
  /// The `views` counter of document `pk` in `replica`'s `todos` table, as
  /// its file says it.
  func views(in replica: String, pk: String = "t") -> Int? {
    let text = read(replica + "/todos/\(pk).json") ?? ""
    guard let line = text.split(separator: "\n").first(where: { $0.contains("\"views\"") }) else {
      return nil
    }
    return Int(
      line.split(separator: ":").last?.trimmingCharacters(in: CharacterSet(charactersIn: " ,")) ?? "")
  }

  /// `folio apply` arguments that add `by` to document `t`'s `views`.
  static func increment(_ by: Int) -> [String] {
    [
      "apply", "todos", "t", "--op", "update", "--transforms",
      #"{"views": {"op": "increment", "by": \#(by)}}"#,
    ]
  }
}
