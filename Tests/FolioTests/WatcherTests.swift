import Folio
import FolioCore
import FolioJSON
import FolioTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

@testable import FolioSystem
@testable import FolioWatch

/// Saves a file the ways editors do, with the syscalls they use.
enum EditorSave {
  /// Open, truncate, write, close (nano, `echo >`, most IDEs).
  static func inPlace(_ path: String, _ text: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw FileSystem.error(errno, "open", path: path) }
    defer { close(fd) }
    try FileSystem.writeAll(fd, Array(text.utf8), path: path)
  }

  /// Write a temp file beside it, then rename it over the original.
  static func tempThenRename(_ path: String, _ text: String) throws {
    try inPlace(path + ".tmp", text)
    guard rename(path + ".tmp", path) == 0 else { throw FileSystem.error(errno, "rename", path: path) }
  }

  /// Vim's default: test the folder with `4913`, rename the original to a
  /// backup, write a new file, delete the backup.
  static func vimStyle(_ path: String, _ text: String) throws {
    let directory = FileSystem.split(path).directory
    try inPlace(directory + "/4913", "")
    unlink(directory + "/4913")
    guard rename(path, path + "~") == 0 else { throw FileSystem.error(errno, "rename", path: path) }
    try inPlace(path, text)
    unlink(path + "~")
  }

  /// `sed -i EXPRESSION path`, run as a subprocess.
  static func sed(_ expression: String, _ path: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sed")
    process.arguments = ["-i", expression, path]
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
  }
}

struct WatcherTests {
  /// A store with document `a` committed, and a running watcher.
  static func watched(_ document: String = #"{"id": "a", "title": "x", "views": 1, "tags": ["p"]}"#) throws
    -> (Store, Scratch, WatchHarness)
  {
    let (store, scratch) = try makeStore()
    try store.write { _ = try $0.put(table: "todos", pk: "a", document: try JSONValue(parsing: document)) }
    try store.commit(message: "start")
    return (store, scratch, try WatchHarness(store: store))
  }

  enum Pattern: String, CaseIterable {
    case inPlace, tempThenRename, vimStyle, sed
  }

  @Test(arguments: Pattern.allCases)
  func eachSavePatternRecordsOneUpdate(_ pattern: Pattern) throws {
    let (store, scratch, watch) = try Self.watched()
    defer { scratch.remove() }
    let path = try store.editorPath("todos", "a")
    let edited = #"{"id": "a", "title": "y", "views": 1, "tags": ["p"]}"#
    switch pattern {
    case .inPlace: try EditorSave.inPlace(path, edited)
    case .tempThenRename: try EditorSave.tempThenRename(path, edited)
    case .vimStyle: try EditorSave.vimStyle(path, edited)
    case .sed: try EditorSave.sed(#"s/"title": "x"/"title": "y"/"#, path)
    }
    #expect(watch.waitForOps(1))
    // A stray second op from the same save would come before the fence's.
    #expect(try watch.fence(in: store, table: "todos"))
    try watch.stop()
    let recorded = watch.recordedWithoutFences
    #expect(recorded.count == 1)
    #expect(recorded.first?.file == (try store.file("todos", "a")))
    #expect(
      recorded.first?.op.mutation
        == Mutation(kind: .update, assignments: [.init(path: .column("title"), value: "y")]))
    #expect(watch.problems.isEmpty)
    #expect(try store.ops(table: "todos", pk: "a").last?.mutation.assignments.first?.value == "y")
    #expect(try store.status().tables.allSatisfy { $0.externalEdits.isEmpty })
  }

  @Test func countersSetsAndNestedPathsBecomeTransforms() throws {
    let (store, scratch, watch) = try Self.watched(
      #"{"id": "a", "views": "9223372036854775807", "tags": ["p", "q"], "meta": {"color": "red", "size": 1}}"#
    )
    defer { scratch.remove() }
    try EditorSave.inPlace(
      try store.editorPath("todos", "a"),
      #"{"id": "a", "views": "9223372036854775817", "tags": ["p", "r"], "meta": {"color": "blue", "size": 1}}"#
    )
    #expect(watch.waitForOps(1))
    try watch.stop()
    let mutation = try #require(watch.recorded.first?.op.mutation)
    #expect(mutation.kind == .update)
    #expect(mutation.assignments == [.init(path: FieldPath("meta.color"), value: "blue")])
    let transforms = Dictionary(grouping: mutation.transforms, by: { $0.path.description })
    #expect(transforms["views"]?.map(\.transform) == [.increment(DecimalInteger("10")!)])
    #expect(transforms["tags"]?.map(\.transform) == [.arrayRemove(["q"]), .arrayUnion(["r"])])
  }

  @Test func newFilesDeletesAndRenamesBetweenPKs() throws {
    let (store, scratch, watch) = try Self.watched()
    defer { scratch.remove() }
    try EditorSave.inPlace(try store.editorPath("todos", "b"), #"{"title": "new"}"#)
    #expect(watch.waitForOps(1))
    #expect(rename(try store.editorPath("todos", "b"), try store.editorPath("todos", "c")) == 0)
    #expect(watch.waitForOps(3))
    #expect(unlink(try store.editorPath("todos", "a")) == 0)
    #expect(watch.waitForOps(4))
    #expect(try watch.fence(in: store, table: "todos"))
    try watch.stop()
    let ops = watch.recordedWithoutFences.map { "\($0.op.mutation.kind) \($0.op.pk)" }
    #expect(ops.count == 4)
    #expect(ops.first == "insert b")
    #expect(Set(ops[1...2]) == ["remove b", "insert c"])
    #expect(ops.last == "remove a")
    #expect(try store.collection("todos").findByID("c").exec()?["title"] == "new")
    #expect(try store.status().tables.allSatisfy { $0.externalEdits.isEmpty })
  }

  @Test func swapBackupAndTempFilesAreIgnored() throws {
    let (store, scratch, watch) = try Self.watched()
    defer { scratch.remove() }
    // Beside the document's file, in the table's layout.
    let path = try store.editorPath("todos", "a")
    let folder = FileSystem.split(path).directory + "/"
    for name in [
      ".a.json.swp", "a.json~", "4913", ".#a.json", "#a.json#", "a.json.tmp", "sedX1b2c3", "a.json.bak",
    ] {
      try EditorSave.inPlace(folder + name, "{not json")
      unlink(folder + name)
    }
    try EditorSave.inPlace(path, #"{"id": "a", "title": "z", "views": 1, "tags": ["p"]}"#)
    #expect(watch.waitForOps(1))
    #expect(try watch.fence(in: store, table: "todos"))
    try watch.stop()
    #expect(watch.recordedWithoutFences.count == 1)
    #expect(watch.problems.isEmpty)
  }

  @Test func invalidJSONIsReportedOnceAndTheFixIsPickedUp() throws {
    let (store, scratch, watch) = try Self.watched()
    defer { scratch.remove() }
    let file = try store.file("todos", "a")
    let path = try store.editorPath("todos", "a")
    let broken = "{\n  \"id\": \"a\",\n  \"title\": \"y\"\n  \"views\": 1\n}"
    try EditorSave.inPlace(path, broken)
    #expect(watch.waitForProblems(1))
    // A second report of the same save would come before the fence's op.
    #expect(try watch.fence(in: store, table: "todos"))
    #expect(watch.problems.count == 1)
    let problem = try #require(watch.problems.first)
    #expect(problem.code == .invalidJSON)
    #expect(problem.location?.file == file)
    #expect(problem.location?.line == 4)
    #expect(problem.description.hasPrefix(file + ":4:"))
    #expect(watch.recordedWithoutFences.isEmpty)
    #expect(scratch.read(file) == broken)
    // A second, different broken save is a second report.
    try EditorSave.inPlace(path, "{")
    #expect(watch.waitForProblems(2))
    try EditorSave.inPlace(path, #"{"id": "a", "title": "y", "views": 1, "tags": ["p"]}"#)
    #expect(watch.waitForOps(2))
    try watch.stop()
    #expect(watch.problems.count == 2)
    #expect(watch.recordedWithoutFences.map(\.op.pk) == ["a"])
    #expect(try store.collection("todos").findByID("a").exec()?["title"] == "y")
  }

  @Test func aKeyColumnNamingAnotherPKIsReportedAndSkipped() throws {
    let (store, scratch, watch) = try Self.watched()
    defer { scratch.remove() }
    let path = try store.editorPath("todos", "a")
    try EditorSave.inPlace(path, "{\n  \"id\": \"b\",\n  \"title\": \"y\"\n}")
    #expect(watch.waitForProblems(1))
    let problem = try #require(watch.problems.first)
    #expect(problem.code == .invalidDocument)
    #expect(problem.description.hasPrefix(try store.file("todos", "a") + ":2:3: error: column 'id' is \"b\""))
    try EditorSave.inPlace(path, #"{"id": "a", "title": "y", "views": 1, "tags": ["p"]}"#)
    #expect(watch.waitForOps(1))
    try watch.stop()
    #expect(watch.recorded.count == 1)
  }

  @Test func catchUpRecordsChangesMadeWhileStopped() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { transaction in
      _ = try transaction.put(
        table: "todos", pk: "a", document: ["id": "a", "title": "x", "views": 1, "tags": ["p"]])
      _ = try transaction.put(table: "todos", pk: "c", document: ["title": "to delete"])
      _ = try transaction.put(table: "todos", pk: "d", document: ["title": "to rename"])
    }
    try store.commit(message: "start")
    let first = try WatchHarness(store: store)
    try first.stop()
    try EditorSave.inPlace(
      try store.editorPath("todos", "a"), #"{"id": "a", "title": "x", "views": 5, "tags": ["p"]}"#)
    try EditorSave.inPlace(try store.editorPath("todos", "b"), #"{"id": "b"}"#)
    #expect(unlink(try store.editorPath("todos", "c")) == 0)
    // A rename between pks: d goes, e comes with d's body (no key column).
    #expect(rename(try store.editorPath("todos", "d"), try store.editorPath("todos", "e")) == 0)
    try EditorSave.inPlace(try store.editorPath("todos", "e"), #"{"id": "e", "title": "to rename"}"#)
    try EditorSave.inPlace(try store.editorPath("notes", "n"), "[1")
    let second = try WatchHarness(store: store)
    // Everything is recorded before the watcher says it is ready.
    let beforeReady = second.all.prefix { if case .ready = $0 { false } else { true } }
    try second.stop()
    let ops = beforeReady.compactMap { if case .recorded(let op, _) = $0 { op } else { nil } }
    #expect(
      ops.map { "\($0.mutation.kind) \($0.pk)" }.sorted() == [
        "insert b", "insert e", "remove c", "remove d", "update a",
      ])
    #expect(try store.collection("todos").findByID("e").exec()?["title"] == "to rename")
    #expect(try store.collection("todos").findByID("d").exec() == nil)
    #expect(try store.collection("todos").findByID("c").exec() == nil)
    #expect(
      ops.first { $0.pk == "a" }?.mutation.transforms.first?.transform == .increment(DecimalInteger("4")!))
    let problems = beforeReady.compactMap { if case .problem(let e) = $0 { e } else { nil } }
    #expect(problems.map { $0.location?.file } == [try store.file("notes", "n")])
    // A third start finds nothing new.
    let third = try WatchHarness(store: store)
    try third.stop()
    #expect(third.recorded.isEmpty)
    #expect(third.problems.count == 1)
  }

  /// The stop and a save's event can wake the same poll; the save is
  /// recorded by this session, not left to the next start's catch-up.
  @Test func saveStillQueuedAtStopIsRecorded() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { _ = try $0.put(table: "todos", pk: "a", document: [:]) }
    var events: [WatchEvent] = []
    let session = try WatchSession(store: store, options: Watcher.Options(debounce: .seconds(60))) {
      events.append($0)
    }
    try session.start()
    try EditorSave.inPlace(try store.editorPath("todos", "a"), #"{"id": "a", "n": 2}"#)
    // The event is queued in the kernel and never read by a loop.
    session.finish()
    let ops = events.compactMap {
      if case .recorded(let op, _) = $0 { "\(op.mutation.kind) \(op.pk)" } else { nil }
    }
    #expect(ops == ["update a"])
  }

  @Test func overflowRescansAndLosesNothing() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { _ = try $0.put(table: "todos", pk: "a", document: [:]) }
    try store.write { _ = try $0.put(table: "todos", pk: "gone", document: [:]) }
    var events: [WatchEvent] = []
    let session = try WatchSession(store: store, options: Watcher.Options(debounce: .milliseconds(1))) {
      events.append($0)
    }
    try session.start()
    try EditorSave.inPlace(try store.editorPath("todos", "a"), #"{"id": "a", "n": 1}"#)
    try EditorSave.inPlace(try store.editorPath("todos", "b"), #"{"id": "b"}"#)
    unlink(try store.editorPath("todos", "gone"))
    // As if the kernel's queue overflowed: the events above are not read.
    try session.handle([Inotify.Event(watch: -1, mask: UInt32(IN_Q_OVERFLOW), cookie: 0, name: "")])
    session.tick(now: SystemClock.monotonicSeconds())
    var ops = events.compactMap {
      if case .recorded(let op, _) = $0 { "\(op.mutation.kind) \(op.pk)" } else { nil }
    }
    #expect(ops.sorted() == ["insert b", "remove gone", "update a"])
    #expect(events.contains { if case .rescanned = $0 { true } else { false } })
    // The queued events, read late, add nothing. (The kernel queued them
    // before each call above returned, and finish() records every save
    // still in its debounce: no pause is needed for either.)
    try session.handle(session.inotify.readEvents())
    session.tick(now: SystemClock.monotonicSeconds())
    session.finish()
    ops = events.compactMap {
      if case .recorded(let op, _) = $0 { "\(op.mutation.kind) \(op.pk)" } else { nil }
    }
    #expect(ops.count == 3)
  }

  @Test func rapidSavesEndInTheFinalState() throws {
    let (store, scratch, watch) = try Self.watched()
    defer { scratch.remove() }
    let path = try store.editorPath("todos", "a")
    for i in 1...50 {
      let text = #"{"id": "a", "title": "v\#(i)", "views": \#(i), "tags": ["p", "t\#(i % 3)"]}"#
      if i % 2 == 0 { try EditorSave.inPlace(path, text) } else { try EditorSave.tempThenRename(path, text) }
      pause(seconds: 0.02)  // an editor's pace
    }
    #expect(
      watch.wait { _ in
        (try? store.collection("todos").findByID("a").exec()?["title"]) == "v50"
      })
    try watch.stop()
    let document = try #require(try store.collection("todos").findByID("a").exec())
    #expect(document["views"] == 50)
    #expect(document["tags"] == ["p", "t2"])
    // What the ops replay to is exactly the file: nothing is left unexplained.
    #expect(try store.status().tables.allSatisfy { $0.externalEdits.isEmpty })
    // The debounce joins saves, but a file saved without pause is still
    // recorded as it goes (every ten debounce periods at most).
    #expect(watch.recorded.count >= 2 && watch.recorded.count < 50)
  }

  @Test func folioOwnWritesAreNotEchoed() throws {
    let (store, scratch, watch) = try Self.watched()
    defer { scratch.remove() }
    let todos = store.collection("todos")
    try store.write { _ = try $0.put(table: "todos", pk: "b", document: ["title": "from the API"]) }
    try store.apply(
      table: "todos", pk: "a", op: .update, transforms: ["views": ["op": "increment", "by": 2]])
    try todos.findByID("b").remove()
    try EditorSave.inPlace(
      try store.editorPath("todos", "a"), #"{"tags":["p"],"views":3,"title":"x","id":"a"}"#)
    _ = try store.format()
    try store.commit(message: "by the API")
    try todos.findByID("a").evict()
    // A person's save after all that: the only op the watcher records.
    try EditorSave.inPlace(try store.editorPath("notes", "n"), #"{"id": "n"}"#)
    #expect(watch.waitForOps(1))
    // An echo of any API write above would come before the fence's op.
    #expect(try watch.fence(in: store, table: "todos"))
    try watch.stop()
    #expect(watch.recordedWithoutFences.map(\.op.pk) == ["n"])
    #expect(watch.problems.isEmpty)
  }

  /// The race behind a flaky run of `folioOwnWritesAreNotEchoed`: an
  /// in-place save truncates (`IN_MODIFY`), and a writer descheduled under
  /// load leaves the file empty for longer than the debounce. The session's
  /// clock stands in for the scheduler: time passes only when the test says
  /// so, and the file is whole only at the close.
  @Test func anInPlaceSaveThatPausesAfterTheTruncateIsReadOnlyWhenClosed() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { _ = try $0.put(table: "todos", pk: "a", document: ["id": "a", "title": "x"]) }
    let session = try ClockedSession(store: store)
    let path = try store.editorPath("todos", "a")
    let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
    try #require(fd >= 0)
    try session.advance(by: 10 * session.debounce)  // ten debounce periods with an empty file
    try FileSystem.writeAll(fd, Array(#"{"id": "a", "title": "y","#.utf8), path: path)
    try session.advance(by: 10 * session.debounce)  // and as long with half a document
    #expect(session.problems.isEmpty, "a file still being written is not a save: \(session.problems)")
    #expect(session.recorded.isEmpty)
    try FileSystem.writeAll(fd, Array(#" "views": 1, "tags": ["p"]}"#.utf8), path: path)
    close(fd)
    try session.advance(by: session.debounce)
    #expect(session.recorded == ["update a"])
    // Long after, and at the stop: nothing more.
    try session.advance(by: 2 * WatchSession.retryDelay)
    session.finish()
    #expect(session.problems.isEmpty)
    #expect(session.recorded == ["update a"])
    #expect(try store.collection("todos").findByID("a").exec()?["title"] == "y")
  }

  /// A program that keeps a file open: a whole document in it is recorded
  /// once the file has been quiet for a while, but half a document is not
  /// reported until the writer closes the file.
  @Test func aFileHeldOpenIsRecordedWhenQuietAndReportedOnlyWhenClosed() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { _ = try $0.put(table: "todos", pk: "a", document: ["id": "a", "title": "x"]) }
    let session = try ClockedSession(store: store)
    let path = try store.editorPath("todos", "a")
    let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
    try #require(fd >= 0)
    try FileSystem.writeAll(
      fd, Array(#"{"id": "a", "title": "y", "views": 1, "tags": ["p"]}"#.utf8), path: path)
    try session.advance(by: session.debounce)
    #expect(session.recorded.isEmpty, "a writer that was just at it may not be done")
    try session.advance(by: WatchSession.writerPatience)
    #expect(session.recorded == ["update a"], "a whole document held open is recorded once quiet")
    // Now half a document, and the writer stays.
    _ = ftruncate(fd, 0)
    _ = lseek(fd, 0, SEEK_SET)
    try FileSystem.writeAll(fd, Array(#"{"id": "a", "ti"#.utf8), path: path)
    try session.advance(by: 1.5 * WatchSession.writerPatience)
    #expect(session.problems.isEmpty)
    close(fd)
    try session.advance(by: session.debounce)
    #expect(session.problems.count == 1)
    // Long after, and at the stop: reported once.
    try session.advance(by: 2 * WatchSession.retryDelay)
    session.finish()
    #expect(session.problems.count == 1)
    #expect(session.problems.first?.location?.file == (try store.file("todos", "a")))
    #expect(session.recorded == ["update a"])
  }

  /// With the watcher in the app's own process: the op the
  /// watcher records reaches the app's observer.
  @Test func anObserverInTheWatchersProcessSeesTheSave() throws {
    let (store, scratch, watch) = try Self.watched()
    defer { scratch.remove() }
    let views = Mutex<[String]>([])
    let live = try store.collection("todos").findByID("a").observeLocal { document, _ in
      views.withLock { $0.append(document?.value["views"]?.compactString ?? "missing") }
    }
    defer { live.stop() }
    try EditorSave.tempThenRename(
      try store.editorPath("todos", "a"), #"{"id": "a", "title": "x", "views": 4, "tags": ["p"]}"#)
    #expect(watch.waitForOps(1))
    #expect(watch.wait { _ in views.withLock { $0.last } == "4" }, "\(views.withLock { $0 })")
    try watch.stop()
    #expect(views.withLock { $0.first } == "1")
    #expect(!views.withLock { $0.contains("missing") })
  }

  @Test func aTableFolderMadeLaterIsWatched() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let watch = try WatchHarness(store: store)
    try FileSystem.makeDirectories(scratch.path + "/data/todos")
    try EditorSave.inPlace(try store.editorPath("todos", "a"), #"{"id": "a"}"#)
    #expect(watch.waitForOps(1))
    try EditorSave.inPlace(try store.editorPath("todos", "a"), #"{"id": "a", "n": 2}"#)
    #expect(watch.waitForOps(2))
    try watch.stop()
    #expect(watch.recorded.map { "\($0.op.mutation.kind) \($0.op.pk)" } == ["insert a", "update a"])
  }

  @Test func aDeletedTableFolderIsRemovesAndIsWatchedWhenItComesBack() throws {
    let (store, scratch, watch) = try Self.watched()
    defer { scratch.remove() }
    try FileManager.default.removeItem(atPath: scratch.path + "/data/todos")
    #expect(watch.waitForOps(1))
    try FileSystem.makeDirectories(scratch.path + "/data/todos")
    try EditorSave.inPlace(try store.editorPath("todos", "b"), #"{"id": "b"}"#)
    #expect(watch.waitForOps(2))
    try watch.stop()
    #expect(watch.recorded.map { "\($0.op.mutation.kind) \($0.op.pk)" } == ["remove a", "insert b"])
    #expect(!watch.all.contains { if case .rescanned = $0 { true } else { false } })
  }

  @Test func stopFlushesPendingSavesAndCommitTimerCommits() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let session = try ClockedSession(
      store: store, options: Watcher.Options(debounce: .seconds(30), commitEvery: .seconds(3600)))
    try EditorSave.inPlace(try store.editorPath("notes", "n"), #"{"id": "n"}"#)
    // Just short of the debounce: the save still waits.
    try session.advance(by: 29)
    #expect(session.recorded.isEmpty)
    session.finish()
    #expect(session.recorded == ["insert n"])
    #expect(session.events.contains { if case .committed = $0 { true } else { false } })
    #expect(try store.status().tables.allSatisfy { $0.changedDocuments.isEmpty && $0.pendingOps == 0 })
  }
}

/// A ``WatchSession`` run by the test on its own clock: events are read and
/// time passes only in ``advance(by:)``, so debounce and writer patience
/// are tested without waiting for them, and without a loaded machine
/// stretching a pause past them.
final class ClockedSession {
  let session: WatchSession
  private let box = EventBox()
  private var now = 1_000.0
  let debounce: Double

  init(store: Store, options: Watcher.Options = Watcher.Options(debounce: .milliseconds(30))) throws {
    debounce = options.debounce.seconds
    session = try WatchSession(store: store, options: options) { [box] in box.append($0) }
    session.clock = { [unowned self] in now }
    try session.start()
  }

  var events: [WatchEvent] { box.snapshot }

  /// Handles every event queued so far, then lets `seconds` pass.
  func advance(by seconds: Double) throws {
    try session.handle(session.inotify.readEvents())
    now += seconds
    session.tick(now: now)
  }

  /// Records what is still waiting, as a stop does.
  func finish() { session.finish() }

  /// The ops recorded, as "kind pk".
  var recorded: [String] {
    events.compactMap { if case .recorded(let op, _) = $0 { "\(op.mutation.kind) \(op.pk)" } else { nil } }
  }

  var problems: [FolioError] {
    events.compactMap { if case .problem(let error) = $0 { error } else { nil } }
  }
}

struct WatchPartsTests {
  @Test(arguments: [
    ("5s", 5.0), ("2m", 120.0), ("1h", 3600.0), ("250ms", 0.25), ("1h30m", 5400.0), ("1.5s", 1.5),
  ])
  func durationsParse(_ text: String, _ seconds: Double) throws {
    #expect(try DurationParser.parse(text).seconds == seconds)
  }

  @Test(arguments: [
    "", "5", "s", "5x", "-1s", "0s", "5 s", "9999999999h", "8761h", "1e300s", "99999999999999999999ms",
  ])
  func badDurationsSayHowToWriteOne(_ text: String) {
    #expect {
      try DurationParser.parse(text)
    } throws: { error in
      (error as? FolioError)?.message.contains("such as 500ms, 5s, 2m or 1h") == true
    }
  }

  @Test func aDurationPastAYearIsRefusedNotTrapped() throws {
    #expect(try DurationParser.parse("8760h") == DurationParser.maximum)
    #expect {
      try DurationParser.parse("9999999999h")
    } throws: { error in
      (error as? FolioError)?.message.contains("longer than the limit of 8760h") == true
    }
  }

  @Test func editorFilesAreNotDocuments() {
    let flat = TableConfig(name: "t", layout: .flat)
    let hashed = TableConfig(name: "t", layout: .hashed)
    let nested = TableConfig(name: "t", layout: .nested)
    for name in [
      ".a.json.swp", "a.json.swp", "a.json~", "4913", ".#a.json", "#a.json#", "a.json.tmp", "sedAb12Cd",
      ".a.json.folio-tmp", "a.json___jb_tmp___", ".goutputstream-XYZ", "a.txt", "a%zz.json",
    ] {
      #expect(EditorFiles.documentPK(table: flat, name: name) == nil, "\(name)")
      for table in [hashed, nested] {
        #expect(
          EditorFiles.documentPK(table: table, name: table.layout.folder(of: "a") + "/" + name) == nil,
          "\(name)")
      }
    }
    #expect(EditorFiles.documentPK(table: flat, name: "a.json") == "a")
    #expect(EditorFiles.documentPK(table: flat, name: "sedan.json") == "sedan")
    #expect(EditorFiles.documentPK(table: flat, name: "a%20b.json") == "a b")
    // A hashed or nested table's documents are in their folder, and only
    // there.
    let a = TableLayout.nested.folder(of: "a")
    #expect(a == TableLayout.hashed.folder(of: "a") + "/" + a.suffix(1))
    for table in [hashed, nested] {
      let folder = table.layout.folder(of: "a")
      #expect(EditorFiles.documentPK(table: table, name: "a.json") == nil)
      #expect(EditorFiles.documentPK(table: table, name: folder + "/a.json") == "a")
      #expect(
        EditorFiles.documentPK(table: table, name: table.layout == .nested ? "00/0/a.json" : "00/a.json")
          == (folder == "00" || folder == "00/0" ? "a" : nil))
      #expect(
        EditorFiles.documentPK(table: table, name: table.layout.folder(of: "a b") + "/a%20b.json") == "a b")
    }
    // One level too few or too many.
    #expect(EditorFiles.documentPK(table: nested, name: String(a.prefix(2)) + "/a.json") == nil)
    #expect(EditorFiles.documentPK(table: hashed, name: a + "/a.json") == nil)
  }

  @Test func debouncerJoinsABurstIntoOne() {
    var debouncer = Debouncer<String>(delay: 0.5, maxWait: 2)
    debouncer.touch("a", now: 0)
    debouncer.touch("a", now: 0.25)
    debouncer.touch("b", now: 0.125)
    #expect(debouncer.nextDeadline == 0.625)
    #expect(debouncer.takeDue(now: 0.7) == ["b"])
    #expect(debouncer.takeDue(now: 0.74).isEmpty)
    #expect(debouncer.takeDue(now: 0.75) == ["a"])
    #expect(debouncer.isEmpty)
    // Touched without pause: still due two seconds after the first touch.
    for step in 0..<12 { debouncer.touch("c", now: Double(step) * 0.25) }
    #expect(debouncer.nextDeadline == 2)
    #expect(debouncer.takeDue(now: 2) == ["c"])
  }
}
