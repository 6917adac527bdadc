import Folio
import FolioJSON
import FolioQuery
import FolioSystem
import FolioTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

@testable import FolioCore

/// Local files: links in the store are never
/// followed, no local input bricks the store, and no editor's save is lost
/// to an apply. After each case, nothing outside the store was created or
/// changed, and the store still reads and writes.
@Suite(.serialized) struct LocalFileSafetyTests {
  /// Every file under `path` with its content, to show nothing changed.
  private func snapshot(_ path: String) -> [String: String] {
    var files: [String: String] = [:]
    let enumerator = FileManager.default.enumerator(atPath: path)
    while let name = enumerator?.nextObject() as? String {
      files[name] = (try? String(contentsOfFile: path + "/" + name, encoding: .utf8)) ?? "<dir>"
    }
    return files
  }

  /// A store and a folder outside it holding `secret.json`.
  private func setUp() throws -> (Store, Scratch, outside: Scratch) {
    let (store, scratch) = try makeStore()
    let outside = Scratch()
    try outside.write("secret.json", "{\"id\": \"d1\", \"v\": 1}\n")
    return (store, scratch, outside)
  }

  /// A store holding `todos/c` with a counter and a note, and that
  /// document's path.
  private func noteStore() throws -> (Store, Scratch, path: String) {
    let (store, scratch) = try makeStore()
    try store.apply(table: "todos", pk: "c", op: .insert, columns: ["views": 0, "note": "e0"])
    return (store, scratch, scratch.path + "/" + (try store.file("todos", "c")))
  }

  private func expectUsable(_ scratch: Scratch, table: String = "notes") throws {
    let store = try Store(at: scratch.url)
    try store.apply(table: table, pk: "after", op: .upsert, columns: ["ok": true])
    #expect(try store.collection(table).findByID("after").exec()?["ok"] == true)
  }

  @Test func symlinkedTableFolderIsRefusedAtOpen() throws {
    let (_, scratch, outside) = try setUp()
    defer {
      scratch.remove()
      outside.remove()
    }
    let before = snapshot(outside.path)
    // The table folder itself, and a folder on its way (data/ of data/todos).
    for link in ["notes", "data"] {
      try? FileManager.default.removeItem(atPath: scratch.path + "/" + link)
      try FileManager.default.createSymbolicLink(
        atPath: scratch.path + "/" + link, withDestinationPath: outside.path)
      let error = #expect(throws: FolioError.self) { try Store(at: scratch.url) }
      #expect(error?.code == .unsafePath)
      #expect(error?.message.contains("\(link) is a symbolic link") == true, "\(String(describing: error))")
      try FileManager.default.removeItem(atPath: scratch.path + "/" + link)
    }
    #expect(snapshot(outside.path) == before)
    try expectUsable(scratch)
    try expectUsable(scratch, table: "todos")
  }

  @Test func symlinkedDocumentIsNeitherReadNorWritten() throws {
    let (store, scratch, outside) = try setUp()
    defer {
      scratch.remove()
      outside.remove()
    }
    try store.apply(table: "notes", pk: "other", op: .insert, columns: ["v": 2])
    let before = snapshot(outside.path)
    let file = try store.file("notes", "d1")
    try FileManager.default.createDirectory(
      atPath: scratch.path + "/" + FileSystem.split(file).directory, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path + "/" + file, withDestinationPath: outside.path + "/secret.json")
    let store2 = try Store(at: scratch.url)
    let read = #expect(throws: FolioError.self) { try store2.collection("notes").findByID("d1").exec() }
    #expect(read?.code == .unsafePath)
    #expect(read?.path?.hasSuffix(file) == true)
    for op in [Mutation.Kind.update, .upsert, .remove] {
      let write = #expect(throws: FolioError.self) {
        try store2.apply(table: "notes", pk: "d1", op: op, columns: ["v": 99])
      }
      #expect(write?.code == .unsafePath)
    }
    // fsck and status report it; other documents still read.
    #expect(
      try store2.check().contains { $0.code == .unsafePath && $0.description.contains(file) })
    _ = try store2.status()
    #expect(try store2.collection("notes").findByID("other").exec()?["v"] == 2)
    #expect(snapshot(outside.path) == before)
    #expect(!Journal.isPending(at: store2.journalPath))
    try expectUsable(scratch)
  }

  @Test func symlinkedOpLogIsNotAppendedThrough() throws {
    let (store, scratch, outside) = try setUp()
    defer {
      scratch.remove()
      outside.remove()
    }
    try outside.write("log.ndjson", "")
    let before = snapshot(outside.path)
    try? FileManager.default.removeItem(atPath: store.opLogPath)
    try FileManager.default.createSymbolicLink(
      atPath: store.opLogPath, withDestinationPath: outside.path + "/log.ndjson")
    let error = #expect(throws: FolioError.self) {
      try store.apply(table: "notes", pk: "a", op: .insert, columns: ["v": 1])
    }
    #expect(error?.code == .unsafePath)
    #expect(snapshot(outside.path) == before)
    #expect(!Journal.isPending(at: store.journalPath))
    #expect(!scratch.exists(try store.file("notes", "a")))
    // The ops folder as a link is refused when the store opens.
    try FileManager.default.removeItem(atPath: store.opLogPath)
    try FileManager.default.removeItem(atPath: scratch.path + "/.folio/ops")
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path + "/.folio/ops", withDestinationPath: outside.path)
    #expect(throws: FolioError.self) { try Store(at: scratch.url) }
    #expect(snapshot(outside.path) == before)
    try FileManager.default.removeItem(atPath: scratch.path + "/.folio/ops")
    try expectUsable(scratch)
  }

  @Test func symlinkNamedAsTheTempFileDoesNotRedirectAWrite() throws {
    let (store, scratch, outside) = try setUp()
    defer {
      scratch.remove()
      outside.remove()
    }
    // Each beside its document's file, in the table's layout.
    let d1 = scratch.path + "/" + (try store.file("notes", "d1"))
    let d2 = scratch.path + "/" + (try store.file("notes", "d2"))
    let temp1 = FileSystem.split(d1).directory + "/.d1.json.folio-tmp"
    let temp2 = FileSystem.split(d2).directory + "/.d2.json.folio-tmp"
    for folder in [d1, d2].map({ FileSystem.split($0).directory }) {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
    // One link to a file that exists, one to a file that does not.
    try FileManager.default.createSymbolicLink(
      atPath: temp1, withDestinationPath: outside.path + "/secret.json")
    try FileManager.default.createSymbolicLink(atPath: temp2, withDestinationPath: outside.path + "/new.json")
    let before = snapshot(outside.path)
    try store.apply(table: "notes", pk: "d1", op: .insert, columns: ["v": 5])
    try store.apply(table: "notes", pk: "d2", op: .insert, columns: ["v": 6])
    #expect(snapshot(outside.path) == before)
    #expect(!outside.exists("new.json"))
    var st = stat()
    #expect(lstat(d1, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG)
    #expect(try store.collection("notes").findByID("d1").exec()?["v"] == 5)
    #expect(try store.collection("notes").findByID("d2").exec()?["v"] == 6)
    #expect(!FileManager.default.fileExists(atPath: temp1))
    try expectUsable(scratch)
  }

  /// Makes a folder unwritable even for root (`chattr +i`), or undoes it.
  private func setReadOnly(_ path: String, _ readOnly: Bool) throws {
    if getuid() == 0 {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
      process.arguments = [readOnly ? "+i" : "-i", path]
      try process.run()
      process.waitUntilExit()
      try #require(process.terminationStatus == 0, "chattr failed")
    } else {
      chmod(path, readOnly ? 0o555 : 0o755)
    }
  }

  @Test func readOnlyTableFolderIsRefusedBeforeTheDurabilityPoint() throws {
    let (store, scratch, outside) = try setUp()
    defer {
      scratch.remove()
      outside.remove()
    }
    try store.apply(table: "notes", pk: "a", op: .insert, columns: ["v": 1])
    // The folder the document's file is in: the table's, or its subfolder.
    let folder = FileSystem.split(try store.file("notes", "a")).directory
    try setReadOnly(scratch.path + "/" + folder, true)
    defer { try? setReadOnly(scratch.path + "/" + folder, false) }
    let opsBefore = try store.ops().count
    let error = #expect(throws: FolioError.self) {
      try store.apply(table: "notes", pk: "a", op: .update, columns: ["v": 2])
    }
    #expect(error?.message.contains("\(folder) is not writable") == true, "\(String(describing: error))")
    #expect(!Journal.isPending(at: store.journalPath))
    #expect(try store.ops().count == opsBefore)
    // Reads and writes elsewhere go on; once writable, the folder takes writes.
    #expect(try store.collection("notes").findByID("a").exec()?["v"] == 1)
    try store.apply(table: "todos", pk: "t", op: .insert, columns: ["v": 1])
    try setReadOnly(scratch.path + "/" + folder, false)
    try store.apply(table: "notes", pk: "a", op: .update, columns: ["v": 2])
    #expect(try store.collection("notes").findByID("a").exec()?["v"] == 2)
  }

  @Test func longPKIsALocalConstraint() throws {
    let (store, scratch, outside) = try setUp()
    defer {
      scratch.remove()
      outside.remove()
    }
    for length in [240, 250] {
      let pk = String(repeating: "k", count: length)
      let error = #expect(throws: FolioError.self) {
        try store.apply(table: "notes", pk: pk, op: .insert, columns: ["v": 1])
      }
      #expect(error?.code == .localConstraint)
    }
    #expect(!Journal.isPending(at: store.journalPath))
    // The longest that fits is written, temp name and all.
    try store.apply(table: "notes", pk: String(repeating: "k", count: 239), op: .insert, columns: ["v": 1])
    try expectUsable(scratch)
  }

  @Test func journalWhoseRedoFailsBlocksOnlyWrites() throws {
    let (store, scratch, outside) = try setUp()
    defer {
      scratch.remove()
      outside.remove()
    }
    try store.apply(table: "notes", pk: "a", op: .insert, columns: ["v": 1])
    let path = store.rootPath + "/" + (try store.file("notes", "a"))
    let old = try #require(try FileSystem.read(path))
    let new = JSONValue.object(["id": "a", "v": 7]).canonicalBytes()
    let journal = Journal(
      logPath: store.opLogPath, logOffset: try OpLog.size(of: store.opLogPath), logBytes: [],
      writes: [.init(path: path, oldHash: FNV.hex(old), new: new)])
    try journal.write(to: store.journalPath, root: store.rootPath)
    // The folder the document's file is in: the table's, or its subfolder.
    let folder = FileSystem.split(path).directory
    try setReadOnly(folder, true)
    defer { try? setReadOnly(folder, false) }

    let reopened = try Store(at: scratch.url)
    let pending = try #require(reopened.pendingRecoveryError)
    #expect(pending.message.contains("an interrupted write could not be completed"))
    #expect(try reopened.collection("notes").findByID("a").exec()?["v"] == 1)
    #expect(try reopened.collection("notes").query().get().count == 1)
    #expect(try reopened.check().contains { $0.message.contains("interrupted write") })
    _ = try reopened.status()
    let write = #expect(throws: FolioError.self) {
      try reopened.apply(table: "todos", pk: "t", op: .insert, columns: ["v": 1])
    }
    #expect(write?.message.contains("an interrupted write could not be completed") == true)
    #expect(write?.message.contains("once that is fixed, the next write completes it") == true)
    #expect(write?.remedy == .completePendingWrite)

    try setReadOnly(folder, false)
    try reopened.apply(table: "todos", pk: "t", op: .insert, columns: ["v": 1])
    #expect(reopened.pendingRecoveryError == nil)
    #expect(try reopened.collection("notes").findByID("a").exec()?["v"] == 7)
    try expectUsable(scratch)
  }

  /// Many `sed -i`-style saves (read, write a temp file, rename over) of
  /// one column while applies raise a counter in another: every save
  /// either survives (the editor reads it back) or was caught by an apply
  /// and folded in (an op assigns its note), and every apply is logged.
  @Test func applyNeverOverwritesAnEditorsSave() throws {
    let (store, scratch, path) = try noteStore()
    defer { scratch.remove() }
    let saves = 300
    let applies = 300
    let lost = Mutex<[String]>([])
    let editorDone = DispatchSemaphore(value: 0)
    let editor = Thread {
      defer { editorDone.signal() }
      for i in 1...saves {
        guard let data = FileManager.default.contents(atPath: path),
          case .object(var object)? = try? JSONValue(parsing: Array(data))
        else { continue }
        if object["note"] != .string("e\(i - 1)") { lost.withLock { $0.append("e\(i - 1)") } }
        object["note"] = .string("e\(i)")
        let temp = FileSystem.split(path).directory + "/sed\(i)"
        _ = FileManager.default.createFile(
          atPath: temp, contents: Data(JSONValue.object(object).canonicalBytes()))
        rename(temp, path)
        pause(seconds: 0.0002)
      }
    }
    editor.start()
    for _ in 0..<applies {
      try store.apply(
        table: "todos", pk: "c", op: .update, transforms: ["views": ["op": "increment", "by": 1]])
    }
    editorDone.wait()
    let final = try #require(try store.collection("todos").findByID("c").exec())
    #expect(final["note"] == .string("e\(saves)"))
    // Every apply is in the log, and every save Folio caught between its
    // read and its rename is logged as an op of its own (assigning the note).
    let ops = try store.ops(table: "todos", pk: "c")
    #expect(
      ops.filter { !$0.mutation.transforms.isEmpty && $0.mutation.assignments.isEmpty }.count == applies)
    // A save the editor did not read back was swapped out by an apply (the
    // file showed the apply's version for a moment): it must be in the log.
    let folded = Set(
      ops.flatMap { op in op.mutation.assignments.filter { $0.path.column == "note" }.compactMap(\.value) })
    let missing = lost.withLock { $0 }.filter { !folded.contains(.string($0)) }
    #expect(missing.isEmpty, "saves overwritten with no op: \(missing.prefix(10))")
    try expectUsable(scratch, table: "todos")
  }

  enum SaveStyle: String, CaseIterable {
    case inPlace, tempThenRename, vimStyle
  }

  /// An editor's save made while a transaction holds a document it read
  /// (the file last changed more than a second before, so nothing about it
  /// is racy) is found before the transaction commits, by each way editors
  /// save, and kept: the save keeps the file's size, so only its content,
  /// times and inode tell.
  @Test(arguments: SaveStyle.allCases)
  func aSaveBetweenATransactionsReadAndItsCommitIsKept(_ style: SaveStyle) throws {
    let (store, scratch, path) = try noteStore()
    defer { scratch.remove() }
    // Past the racy margin: a check by stat data would trust the file.
    waitPastRacyWindow(of: FileSystem.split(path).directory)
    var runs = 0
    try store.write { tx in
      runs += 1
      _ = try tx.get(table: "todos", pk: "c")
      try tx.apply(
        table: "todos", pk: "c", op: .update, transforms: ["views": ["op": "increment", "by": 1]])
      guard runs == 1 else { return }
      let saved = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "e0", with: "e1")
      switch style {
      case .inPlace: try EditorSave.inPlace(path, saved)
      case .tempThenRename: try EditorSave.tempThenRename(path, saved)
      case .vimStyle: try EditorSave.vimStyle(path, saved)
      }
    }
    let final = try #require(try store.collection("todos").findByID("c").exec())
    #expect(final["note"] == "e1")
    #expect(final["views"] == 1)
    #expect(runs == 2, "the changed file makes the transaction run again on the save")
    try expectUsable(scratch, table: "todos")
  }
}
