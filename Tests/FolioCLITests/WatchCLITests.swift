import FolioTestSupport
import Foundation
import Glibc
import Testing

struct WatchCLITests {
  /// A store with `todos/a` committed.
  static func store(_ document: String = #"{"id": "a", "title": "x", "views": 1, "tags": ["p"]}"#) throws
    -> CLIScratch
  {
    let scratch = try CLIScratch()
    #expect(try scratch.folio("init").status == 0)
    #expect(try scratch.folio("put", "todos", "a", "-", input: document).status == 0)
    #expect(try scratch.folio("commit", "-m", "start").status == 0)
    return scratch
  }

  @Test func everyWayEditorsSaveIsRecordedOnce() throws {
    let scratch = try Self.store()
    defer { scratch.remove() }
    let watch = try WatchProcess(in: scratch.path)
    let a = scratch.path + "/data/todos/a.json"
    var expected = 0
    func expectOneMore(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
      expected += 1
      #expect(watch.waitFor(expected + watch.fences, "op"), "\(what)", sourceLocation: sourceLocation)
      // A stray second op from the same save would come before the fence's.
      #expect(watch.fence(in: scratch.path + "/data/todos"), "\(what)", sourceLocation: sourceLocation)
      #expect(
        watch.opsWithoutFences.count == expected, "\(what): \(watch.outputText)",
        sourceLocation: sourceLocation)
    }

    Save.inPlace(a, #"{"id": "a", "title": "in place", "views": 1, "tags": ["p"]}"#)
    expectOneMore("in place")
    Save.tempThenRename(a, #"{"id": "a", "title": "renamed over", "views": 1, "tags": ["p"]}"#)
    expectOneMore("temp then rename")
    let vim = try Save.run(
      "/usr/bin/vim",
      [
        "-u", "NONE", "-i", "NONE", "-N", "-e", "-s", "-c", "%s/renamed over/vim/", "-c", "wq",
        "data/todos/a.json",
      ],
      in: scratch.path)
    #expect(vim == 0)
    expectOneMore("vim")
    #expect(try Save.run("/bin/sed", ["-i", "s/vim/sed/", "data/todos/a.json"], in: scratch.path) == 0)
    expectOneMore("sed -i")
    #expect(rename(a, scratch.path + "/data/todos/b.json") == 0)
    // A rename is a remove and an insert, but b.json still says "id": "a".
    #expect(watch.waitFor(expected + watch.fences + 1, "op"))
    #expect(watch.waitFor(1, "problem"))
    expected += 1
    Save.inPlace(
      scratch.path + "/data/todos/b.json", #"{"id": "b", "title": "sed", "views": 1, "tags": ["p"]}"#)
    expectOneMore("fixed key after rename")
    #expect(unlink(scratch.path + "/data/todos/b.json") == 0)
    expectOneMore("delete")
    #expect(watch.stop() == 0)

    let summary = watch.opsWithoutFences.map { "\($0["op"]!) \($0["pk"]!)" }
    #expect(summary == ["update a", "update a", "update a", "update a", "remove a", "insert b", "remove b"])
    #expect(
      watch.opsWithoutFences.map { ($0["set"] as? [String: Any])?["title"] as? String }.prefix(4) == [
        "in place", "renamed over", "vim", "sed",
      ])
    let problem = try #require(watch.problems.first)
    #expect(
      (problem["error"] as? String)?.hasPrefix("data/todos/b.json:1:2: error: column 'id' is \"a\"") == true)
    #expect(watch.problems.count == 1)
    // Every op is in the log, and nothing is left unexplained.
    let log = try scratch.folio("log", "todos")
    #expect(log.stdout.split(separator: "\n").count == 1 + 7 + watch.fences)
    let status = try scratch.folio("status", "--json")
    #expect(status.stdout.contains(#""editedOutsideFolio":[]"#))
    #expect(!status.stdout.contains(#""editedOutsideFolio":[""#))
  }

  @Test func swapAndBackupFilesAreIgnored() throws {
    let scratch = try Self.store()
    defer { scratch.remove() }
    let watch = try WatchProcess(in: scratch.path)
    let folder = scratch.path + "/data/todos/"
    for name in [".a.json.swp", "a.json~", "4913", ".#a.json", "#a.json#", "a.json.tmp", "sedQ1w2E3"] {
      Save.inPlace(folder + name, "{broken")
      unlink(folder + name)
    }
    Save.inPlace(folder + "a.json", #"{"id": "a", "title": "y", "views": 1, "tags": ["p"]}"#)
    #expect(watch.waitFor(1, "op"))
    #expect(watch.fence(in: folder))
    #expect(watch.stop() == 0)
    #expect(watch.opsWithoutFences.count == 1)
    #expect(watch.problems.isEmpty)
  }

  @Test func invalidJSONIsReportedWithItsPositionAndTheFileIsLeftAlone() throws {
    let scratch = try Self.store()
    defer { scratch.remove() }
    let watch = try WatchProcess(in: scratch.path)
    let broken = "{\n  \"id\": \"a\",\n  \"title\": oops\n}\n"
    Save.inPlace(scratch.path + "/data/todos/a.json", broken)
    let problem = watch.waitForLine { $0["event"] as? String == "problem" }
    #expect(problem?["file"] as? String == "data/todos/a.json")
    #expect(problem?["line"] as? Int == 3)
    #expect(problem?["column"] as? Int == 12)
    #expect((problem?["error"] as? String)?.hasPrefix("data/todos/a.json:3:12: error: ") == true)
    // A second report would come before the fence's op.
    #expect(watch.fence(in: scratch.path + "/data/todos"))
    #expect(watch.problems.count == 1)
    #expect(watch.opsWithoutFences.isEmpty)
    #expect(scratch.read("data/todos/a.json") == broken)
    Save.inPlace(
      scratch.path + "/data/todos/a.json", #"{"id": "a", "title": "fixed", "views": 1, "tags": ["p"]}"#)
    #expect(watch.waitFor(1 + watch.fences, "op"))
    #expect(watch.stop() == 0)
    #expect(try scratch.folio("get", "todos", "a").stdout.contains(#""title": "fixed""#))
  }

  /// A file a program makes and writes later is not a save until it holds
  /// something or is closed: nothing is reported while it is empty,
  /// however long the writer takes.
  @Test func aFileMadeAndWrittenLaterIsNotReportedWhileEmpty() throws {
    let scratch = try Self.store()
    defer { scratch.remove() }
    let watch = try WatchProcess(in: scratch.path)
    let path = scratch.path + "/data/todos/later.json"
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    try #require(fd >= 0)
    // Every event of the empty file is ahead of the fence's, and its quiet
    // period ends first: any report of it would come before the fence.
    #expect(watch.fence(in: scratch.path + "/data/todos"))
    #expect(watch.fence(in: scratch.path + "/data/todos"))
    #expect(watch.problems.isEmpty, "\(watch.problems)")
    let text = #"{"id": "later", "title": "written at last", "views": 0, "tags": []}"#
    _ = text.withCString { write(fd, $0, strlen($0)) }
    close(fd)
    let op = watch.waitForLine { $0["event"] as? String == "op" && $0["pk"] as? String == "later" }
    #expect(op != nil, "\(watch.outputText)")
    #expect(watch.problems.isEmpty, "\(watch.problems)")
    #expect(watch.stop() == 0)
  }

  @Test func textOutputPutsProblemsOnStderr() throws {
    let scratch = try Self.store()
    defer { scratch.remove() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: FolioRunner.binary)
    process.arguments = ["watch", "--debounce", "20ms"]
    process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Wait for the ready line on stderr before saving.
    var errorText = ""
    let errorHandle = err.fileHandleForReading
    while !errorText.contains("press Ctrl-C") {
      let data = errorHandle.availableData
      if data.isEmpty { break }
      errorText += String(decoding: data, as: UTF8.self)
    }
    Save.inPlace(scratch.path + "/data/todos/a.json", "{\"id\": \"a\",}")
    while !errorText.contains("error:") {
      let data = errorHandle.availableData
      if data.isEmpty { break }
      errorText += String(decoding: data, as: UTF8.self)
    }
    Save.inPlace(scratch.path + "/data/todos/a.json", #"{"id": "a", "title": "t"}"#)
    // Recorded: the op is in the log.
    #expect(
      try eventually { try scratch.folio("log", "todos", "a").stdout.contains(#""set":{"title":"t"}"#) },
      "the watcher never recorded the fix")
    kill(process.processIdentifier, SIGTERM)
    let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    errorText += String(decoding: errorHandle.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(errorText.contains("data/todos/a.json:1:11: error: "))
    #expect(output.hasPrefix("data/todos/a.json: update"))
    #expect(output.contains(#"set {"title":"t"}"#))
  }

  @Test func catchUpOnStartAndTransformsInTheLog() throws {
    let scratch = try Self.store(
      #"{"id": "a", "views": "2147483647", "tags": ["p", "q"], "meta": {"size": 1}}"#)
    defer { scratch.remove() }
    #expect(try scratch.folio("put", "todos", "c", "-", input: #"{"title": "to delete"}"#).status == 0)
    #expect(try scratch.folio("put", "todos", "d", "-", input: #"{"title": "to rename"}"#).status == 0)
    #expect(try scratch.folio("commit", "-m", "more").status == 0)
    try scratch.write(
      "data/todos/a.json", #"{"id": "a", "views": "2147483657", "tags": ["q", "r"], "meta": {"size": 2}}"#)
    try scratch.write("data/todos/new.json", #"{"title": "made offline"}"#)
    #expect(unlink(scratch.path + "/data/todos/c.json") == 0)
    // A rename between pks, with the key column following the file name.
    #expect(rename(scratch.path + "/data/todos/d.json", scratch.path + "/data/todos/e.json") == 0)
    try scratch.write("data/todos/e.json", #"{"id": "e", "title": "to rename"}"#)
    let watch = try WatchProcess(in: scratch.path)
    #expect(watch.stop(signal: SIGTERM) == 0)
    let events = watch.records.map { $0["event"] as? String ?? "" }
    #expect(events == ["op", "op", "op", "op", "op", "ready"])
    let kinds = watch.ops.map { "\($0["op"] as? String ?? "") \($0["pk"] as? String ?? "")" }
    #expect(kinds.sorted() == ["insert e", "insert new", "remove c", "remove d", "update a"])
    #expect(try scratch.folio("get", "todos", "d").status != 0)
    #expect(try scratch.folio("get", "todos", "e").stdout.contains("to rename"))
    let log = try scratch.folio("log", "todos", "a")
    let last = try #require(log.stdout.split(separator: "\n").last)
    let op = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
    let transforms = try #require(op["transforms"] as? [String: Any])
    #expect((transforms["views"] as? [String: Any])?["op"] as? String == "increment")
    #expect("\((transforms["views"] as? [String: Any])?["by"] ?? "")" == "10")
    let tags = try #require(transforms["tags"] as? [[String: Any]])
    #expect(tags.map { $0["op"] as? String } == ["arrayRemove", "arrayUnion"])
    #expect(op["set"] as? [String: Int] == ["meta.size": 2])
    // Started again, it finds nothing new.
    let again = try WatchProcess(in: scratch.path)
    #expect(again.stop() == 0)
    #expect(again.ops.isEmpty)
  }

  @Test func aSignalFlushesPendingSavesAndExitsZero() throws {
    let scratch = try Self.store()
    defer { scratch.remove() }
    for signal in [SIGINT, SIGTERM] {
      let watch = try WatchProcess(in: scratch.path, ["--debounce", "1h"])
      Save.inPlace(scratch.path + "/data/todos/a.json", #"{"id": "a", "title": "signal \#(signal)"}"#)
      // No state to wait for: the save must not be recorded within the hour.
      pause(seconds: 0.1)
      #expect(watch.ops.isEmpty)
      #expect(watch.stop(signal: signal) == 0)
      #expect(watch.ops.count == 1)
      #expect(watch.errorText.isEmpty)
    }
  }

  @Test func timersCommitAndSync() throws {
    let scratch = try Self.store()
    defer { scratch.remove() }
    let remote = scratch.path + "-remote.git"
    defer { try? FileManager.default.removeItem(atPath: remote) }
    #expect(try Save.run("/usr/bin/git", ["init", "-q", "--bare", remote], in: scratch.path) == 0)
    #expect(try Save.run("/usr/bin/git", ["remote", "add", "origin", remote], in: scratch.path) == 0)
    let watch = try WatchProcess(
      in: scratch.path, ["--commit-every", "200ms", "--sync-every", "400ms", "--remote", "origin"])
    Save.inPlace(scratch.path + "/data/todos/a.json", #"{"id": "a", "title": "synced"}"#)
    #expect(watch.waitFor(1, "op"))
    let sync = watch.waitForLine { $0["event"] as? String == "sync" && $0["pushed"] as? Bool == true }
    #expect(watch.stop() == 0)
    #expect(sync != nil, "\(watch.outputText)\n\(watch.errorText)")
    #expect(watch.records.contains { $0["event"] as? String == "commit" })
    let show = Process()
    show.executableURL = URL(fileURLWithPath: "/usr/bin/git")
    show.arguments = ["--git-dir", remote, "show", "main:data/todos/a.json"]
    let pipe = Pipe()
    show.standardOutput = pipe
    try show.run()
    let shown = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    show.waitUntilExit()
    #expect(shown.contains("synced"))
  }

  /// The whole path: a person edits a counter and a set with vim
  /// while `folio watch --sync-every` runs; a peer raised the same counter
  /// meanwhile. Both replicas end with the sum and the union.
  @Test func aVimEditUnderWatchIsSyncedAndMergedWithAPeer() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    #expect(try FolioRunner.shell("git init -q --bare remote.git", in: box.root.path) == 0)
    try box.root.write("a/folio.yaml", CLIScratch.yaml)
    try box.folio(["init"], in: "a")
    try box.folio(["put", "todos", "t", "-"], in: "a", input: #"{"views": 1, "tags": ["p"], "title": "x"}"#)
    #expect(try box.git("remote add origin \(box.remote)", in: "a") == 0)
    try box.folio(["sync"], in: "a")
    try box.folio(["clone", box.remote, "b"], in: "")
    try box.folio(
      [
        "apply", "todos", "t", "--op", "update", "--transforms", #"{"views": {"op": "increment", "by": 10}}"#,
      ],
      in: "b")
    try box.folio(["sync"], in: "b")

    let watch = try WatchProcess(in: box.root.path + "/a", ["--sync-every", "300ms"])
    let vim = try Save.run(
      "/usr/bin/vim",
      [
        "-u", "NONE", "-i", "NONE", "-N", "-e", "-s", "-c", #"%s/"views": 1/"views": 5/"#, "-c",
        #"%s/"p"/"p", "q"/"#, "-c", "wq", "data/todos/t.json",
      ],
      in: box.root.path + "/a")
    #expect(vim == 0)
    #expect(watch.waitFor(1, "op"))
    // A sync that pushed after the op (an earlier one may have merged b's).
    let synced = watch.waitForLine { _ in
      let records = watch.records
      guard let opIndex = records.firstIndex(where: { $0["event"] as? String == "op" }) else { return false }
      return records[(opIndex + 1)...].contains {
        $0["event"] as? String == "sync" && $0["pushed"] as? Bool == true
      }
    }
    #expect(watch.stop() == 0)
    #expect(synced != nil, "\(watch.outputText)\n\(watch.errorText)")
    let op = try #require(watch.ops.first)
    #expect(watch.ops.count == 1, "\(watch.outputText)")
    #expect(op["op"] as? String == "update")
    #expect("\(op)".contains("increment"), "the counter edit is an increment: \(op)")

    try box.folio(["sync"], in: "b")
    for replica in ["a", "b"] {
      let document = try box.folio(["get", "todos", "t"], in: replica).stdout
      #expect(
        document.contains(#""views":15"#) || document.contains(#""views": 15"#), "\(replica): \(document)")
      #expect(document.contains("\"q\""), "\(replica): \(document)")
    }
  }

  @Test(arguments: [
    ["--commit-every", "soon"], ["--debounce", "5"], ["--remote", "origin"], ["--sync-every"], ["extra"],
  ])
  func badArgumentsAreUsageErrors(_ arguments: [String]) throws {
    let scratch = try Self.store()
    defer { scratch.remove() }
    let result = try FolioRunner.run(["watch"] + arguments, in: scratch.path)
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix("error: "))
    #expect(result.stderr.contains("Usage: folio watch"))
  }

  @Test func helpDescribesTheCommand() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    let result = try scratch.folio("watch", "--help")
    #expect(result.status == 0)
    #expect(result.stdout.contains("USAGE: folio watch"))
    #expect(result.stdout.contains("--commit-every DURATION"))
    #expect(try scratch.folio("--help").stdout.contains("  watch "))
  }
}
