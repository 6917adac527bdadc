import Folio
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioCore

struct StoreTests {
  @Test func createIsIdempotentAndKeepsTheReplica() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    #expect(scratch.exists(".git/HEAD"))
    #expect(scratch.exists(".folio/ops"))
    let attributes = try #require(scratch.read(".gitattributes"))
    for (table, folder) in [("todos", "data/todos"), ("notes", "notes")] {
      let files = String(repeating: "*/", count: try store.table(named: table).layout.depth) + "*.json"
      #expect(attributes.contains("\(folder)/\(files) merge=folio"))
    }
    #expect(store.replicaID.count == 16)
    let again = try Store.create(at: scratch.url)
    #expect(again.replicaID == store.replicaID)
    #expect(scratch.read(".gitattributes") == attributes)
    #expect(try Store(at: scratch.url).replicaID == store.replicaID)
  }

  @Test func createWritesAMinimalConfig() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let store = try Store.create(at: scratch.url.appendingPathComponent("new"))
    #expect(store.config.tables.isEmpty)
    #expect(scratch.exists("new/folio.yaml"))
    #expect(scratch.exists("new/.git"))
  }

  @Test func opensFromASubdirectory() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try FileManager.default.createDirectory(
      atPath: scratch.path + "/data/todos/deep", withIntermediateDirectories: true)
    let nested = try Store(at: scratch.url.appendingPathComponent("data/todos/deep"))
    #expect(nested.root.path == store.root.path)
  }

  /// A path, absolute or relative, with `.`, `..` and doubled slashes,
  /// and a URL relative to another folder, all open the same store.
  @Test func opensByPathAsByURL() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try FileManager.default.createDirectory(
      atPath: scratch.path + "/data/todos/deep", withIntermediateDirectories: true)
    #expect(try Store(atPath: scratch.path + "//data/./todos/deep/../deep").root.path == store.root.path)
    let relative = URL(
      fileURLWithPath: "todos/deep", relativeTo: URL(fileURLWithPath: scratch.path + "/data/"))
    #expect(try Store(at: relative).root.path == store.root.path)
    // A relative path is taken from the working directory.
    let here = FileManager.default.currentDirectoryPath
    #expect(FileSystem.lexicalPath("x/../y/.") == (here == "/" ? "" : here) + "/y")
  }

  @Test(arguments: [
    ("/a/b/c", "/a/b/c"), ("/a//b/./c/", "/a/b/c"), ("/a/b/../c", "/a/c"), ("/../..", "/"), ("/", "/"),
    ("/a/./../b/..", "/"),
  ])
  func lexicalPathsDropDotsAndDoubledSlashes(_ path: String, _ expected: String) {
    #expect(FileSystem.lexicalPath(path) == expected)
  }

  @Test func openingOutsideAStoreSaysHowToFix() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let error = #expect(throws: FolioError.self) { try Store(at: scratch.url) }
    #expect(error?.code == .storeNotFound)
    // The library words the remedy with its own API; the message names no command.
    #expect(error?.remedy == .createStore)
    #expect(error?.description.hasSuffix("\nTo create one: Store.create(at:)") == true)
    #expect(error?.localizedDescription == error?.description)
    #expect(error?.recoverySuggestion == "To create one: Store.create(at:)")
    #expect(error?.message.contains("folio init") == false)
  }

  @Test func badConfigIsReportedWithPosition() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    try scratch.write("folio.yaml", "version: 1\ntables:\n  todos:\n    pth: x\n")
    let error = #expect(throws: FolioError.self) { try Store.create(at: scratch.url) }
    #expect(error?.description.hasPrefix("folio.yaml:4:5: error:") == true, "\(String(describing: error))")
  }

  @Test func unknownTable() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let error = #expect(throws: FolioError.self) {
      try store.collection("nope").findByID("a").exec()
    }
    #expect(error?.code == .unknownTable)
    #expect(error?.message.contains("todos") == true)
  }

  @Test func documentsAreCanonicalAndHoldTheirKey() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(table: "todos", pk: "b", op: .insert, columns: ["z": 1, "a": ["y": true, "x": []]])
    #expect(
      scratch.read(try store.file("todos", "b")) == """
        {
          "a": {
            "x": [],
            "y": true
          },
          "id": "b",
          "z": 1
        }

        """)
  }

  @Test func invalidDocumentIsReportedNotOverwritten() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let file = try store.file("notes", "bad")
    try scratch.write(file, "{\n  \"a\": 1,\n}\n")
    let error = #expect(throws: FolioError.self) {
      try store.apply(table: "notes", pk: "bad", op: .update, columns: ["a": 2])
    }
    #expect(
      error?.description.hasPrefix(file + ":2:9: error: trailing comma") == true,
      "\(String(describing: error))")
    #expect(scratch.read(file) == "{\n  \"a\": 1,\n}\n")
  }

  @Test func transactionsAreAllOrNothing() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    struct Abort: Error {}
    #expect(throws: Abort.self) {
      try store.write { tx in
        try tx.apply(table: "notes", pk: "a", op: .insert, columns: ["v": 1])
        #expect(try tx.get(table: "notes", pk: "a")?["v"] == 1)
        throw Abort()
      }
    }
    #expect(!scratch.exists(try store.file("notes", "a")))
    #expect(try store.ops().isEmpty)
    try store.write { tx in
      for i in 0..<40 { try tx.apply(table: "notes", pk: "p\(i)", op: .insert, columns: ["i": .integer(i)]) }
      try tx.apply(table: "notes", pk: "p0", op: .update, transforms: ["i": .increment(5)])
    }
    #expect(try store.collection("notes").count() == 40)
    #expect(try store.collection("notes").findByID("p0").exec()?["i"] == 5)
    #expect(try store.ops().count == 41)
    #expect(!Journal.isPending(at: store.journalPath))
  }

  @Test func opLogLinesAreStampedInOrder() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    for i in 0..<20 {
      try store.apply(table: "notes", pk: "a", op: .upsert, transforms: ["n": .increment(i)])
    }
    let ops = try store.ops()
    #expect(ops.count == 20)
    #expect(zip(ops, ops.dropFirst()).allSatisfy { $0.hlc < $1.hlc })
    #expect(ops.allSatisfy { $0.hlc.replica == store.replicaID })
    let log = try #require(scratch.read(".folio/ops/\(store.replicaID).ndjson"))
    let first = try #require(log.split(separator: "\n").first)
    let parsed = try JSONValue(parsing: String(first))
    #expect(parsed["table"] == "notes")
    #expect(parsed["op"] == "upsert")
    #expect(parsed["transforms"]?["n"] == ["op": "increment", "by": 0])
    #expect(HLC(parsed["hlc"]?.stringValue ?? "") != nil)
  }

  @Test func evictRemovesLocallyWithoutAnOp() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let notes = store.collection("notes")
    try store.apply(table: "notes", pk: "a", op: .insert, columns: ["v": 1])
    #expect(try notes.findByID("a").evict())
    #expect(try !notes.findByID("a").evict())
    #expect(try notes.findByID("a").exec() == nil)
    #expect(!scratch.exists(try store.file("notes", "a")))
    #expect(try store.isEvicted(table: "notes", pk: "a"))
    #expect(try store.ops().map(\.mutation.kind) == [.insert])
    try store.apply(table: "notes", pk: "a", op: .insert, columns: ["v": 2])
    #expect(try !store.isEvicted(table: "notes", pk: "a"))
  }

  @Test func putRecordsTheDiffThroughColumnKinds() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    _ = try store.write {
      try $0.put(
        table: "todos", pk: "t",
        document: ["views": 3, "tags": ["a", "b"], "title": "x", "meta": ["a": 1, "b": 2]])
    }
    let (_, results) = try store.write {
      try $0.put(
        table: "todos", pk: "t", document: ["views": 5, "tags": ["b", "c"], "meta": ["a": 1, "b": 3]])
    }
    #expect(results.contains(.incremented(pk: "t", path: "views", by: "2")))
    #expect(results.contains(.unioned(pk: "t", path: "tags", values: ["c"])))
    #expect(results.contains(.removedMembers(pk: "t", path: "tags", values: ["a"])))
    #expect(results.contains(.set(pk: "t", path: "meta.b", value: 3)))
    #expect(results.contains(.removed(pk: "t", path: "title")))
    let doc = try #require(try store.collection("todos").findByID("t").exec())
    #expect(doc.value == ["id": "t", "views": 5, "tags": ["b", "c"], "meta": ["a": 1, "b": 3]])
    let (pk, _) = try store.write {
      try $0.put(table: "todos", pk: nil, document: ["id": "from-key", "v": 1])
    }
    #expect(pk == "from-key")
  }

  @Test func aWaitingWriterGivesUpClearly() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let other = try Store(rootPath: store.rootPath, wiring: .layers)
    let impatient = try Store(rootPath: store.rootPath, wiring: .layers, lockTimeout: 0.2)
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    let thread = Thread {
      try? other.write { _ in
        started.signal()
        release.wait()  // holds the lock until the test has been refused
      }
      finished.signal()
    }
    thread.start()
    started.wait()
    let error = #expect(throws: FolioError.self) {
      try impatient.apply(table: "notes", pk: "a", op: .insert)
    }
    #expect(error?.code == .locked)
    #expect(error?.message.contains("process \(getpid())") == true, "\(String(describing: error))")
    release.signal()
    try #require(finished.wait(timeout: .now() + stateTimeout) == .success, "the other writer never finished")
    try impatient.apply(table: "notes", pk: "a", op: .insert)
  }

  @Test func concurrentWritersLoseNothing() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    let stores = try (0..<4).map { _ in try Store(rootPath: store.rootPath, wiring: .layers) }
    DispatchQueue.concurrentPerform(iterations: 4) { i in
      for _ in 0..<25 {
        try! stores[i].apply(table: "notes", pk: "c", op: .upsert, transforms: ["n": .increment(1)])
      }
    }
    #expect(try store.collection("notes").findByID("c").exec()?["n"] == 100)
    #expect(try store.ops().count == 100)
  }

  @Test func recoveryRedoesACommittedJournal() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(table: "notes", pk: "a", op: .insert, columns: ["n": 1])
    let path = store.rootPath + "/" + (try store.file("notes", "a"))
    let old = try #require(try FileSystem.read(path))
    let op = Op(
      hlc: HLC(wall: SystemClock.nowMilliseconds() + 1000, counter: 0, replica: store.replicaID),
      table: "notes", pk: "a",
      mutation: Mutation(
        kind: .update, transforms: [.init(path: "n", transform: .increment(DecimalInteger(4)))]))
    let new = JSONValue.object(["id": "a", "n": 5]).canonicalBytes()
    let journal = Journal(
      logPath: store.opLogPath, logOffset: try OpLog.size(of: store.opLogPath),
      logBytes: op.json.compactBytes() + [10],
      writes: [
        .init(path: path, oldHash: FNV.hex(old), new: new),
        .init(path: store.rootPath + "/" + (try store.file("notes", "b")), oldHash: nil, new: new),
      ])
    // A crash after the durability point: the journal is whole, the log was
    // half-appended, and no document was touched.
    try journal.write(to: store.journalPath, root: store.rootPath)
    let half = Array(op.json.compactBytes().prefix(20))
    try OpLog.append(half, to: store.opLogPath, at: journal.logOffset, root: store.rootPath)
    let reopened = try Store(at: scratch.url)
    #expect(!Journal.isPending(at: store.journalPath))
    #expect(try reopened.collection("notes").findByID("a").exec()?["n"] == 5)
    #expect(try reopened.collection("notes").findByID("b").exec() != nil)
    #expect(try reopened.ops().count == 2)
    // A torn journal is dropped and changes nothing.
    try FileSystem.writeAtomically(store.journalPath, Array("{\"version\":1,\"log\"".utf8), sync: false)
    let again = try Store(at: scratch.url)
    #expect(!Journal.isPending(at: store.journalPath))
    #expect(try again.ops().count == 2)
  }

  /// A crash after a document was swapped in but before the file it
  /// swapped out was removed: the redo finds the document already new and
  /// still removes the leftover, so `fsck` finds nothing.
  @Test func recoveryRemovesTheFileASwapLeftBehind() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(table: "notes", pk: "a", op: .insert, columns: ["n": 1])
    let path = store.rootPath + "/" + (try store.file("notes", "a"))
    let old = try #require(try FileSystem.read(path))
    let new = JSONValue.object(["id": "a", "n": 2]).canonicalBytes()
    let journal = Journal(
      logPath: store.opLogPath, logOffset: try OpLog.size(of: store.opLogPath), logBytes: [],
      writes: [.init(path: path, oldHash: FNV.hex(old), new: new)])
    try journal.write(to: store.journalPath, root: store.rootPath)
    let temp = FileSystem.temporaryPath(for: path)
    // (In this order: writing the document goes through the same temp name.)
    try FileSystem.writeAtomically(path, new, sync: false)
    try FileSystem.writeAtomically(temp, old, sync: false)
    #expect(try store.check().contains { $0.message.contains("leftover temporary file") })
    let reopened = try Store(at: scratch.url)
    #expect(!Journal.isPending(at: store.journalPath))
    #expect(try FileSystem.read(temp) == nil)
    #expect(try FileSystem.read(path) == new)
    #expect(try reopened.check().isEmpty)
  }

  @Test func fsckFindsEveryKindOfProblem() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(table: "notes", pk: "good", op: .insert)
    let (broken, wrongKey) = (try store.file("notes", "broken"), try store.file("notes", "wrongkey"))
    let (noKey, array) = (try store.file("notes", "nokey"), try store.file("notes", "array"))
    try scratch.write(broken, "{\"id\": \"broken\",\n  \"a\": tru }")
    try scratch.write(wrongKey, "{\n  \"id\": \"other\"\n}")
    try scratch.write(noKey, "{}")
    try scratch.write(array, "[]")
    try scratch.write("notes/bad name.json", "{}")
    try scratch.write("notes/sub/x.json", "{}")
    let problems = try store.check().map(\.description)
    #expect(problems.contains { $0.hasPrefix(broken + ":2:8: error:") }, "\(problems)")
    #expect(problems.contains { $0.hasPrefix(wrongKey + ":2:3: error: key column 'id'") }, "\(problems)")
    #expect(problems.contains { $0.hasPrefix(noKey + ":1:1: error: missing key column") })
    #expect(problems.contains { $0.hasPrefix(array + ":1:1: error: a document must be a JSON object") })
    #expect(problems.contains { $0.hasPrefix("notes/bad name.json:1:1: error: not a document file name") })
    #expect(problems.contains { $0.hasPrefix("notes/sub:1:1: error:") })
    #expect(problems.count == 6)
  }

  @Test func formatRewritesOnlyWhatIsNotCanonical() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(table: "notes", pk: "a", op: .insert)
    let (b, c) = (try store.file("notes", "b"), try store.file("notes", "c"))
    try scratch.write(b, "{\"x\":[1,2],\"id\":\"b\"}")
    try scratch.write(c, "{oops")
    let (rewritten, problems) = try store.format()
    #expect(rewritten == [b])
    #expect(problems.count == 1)
    #expect(scratch.read(b) == "{\n  \"id\": \"b\",\n  \"x\": [\n    1,\n    2\n  ]\n}\n")
    #expect(scratch.read(c) == "{oops")
    #expect(try store.ops().count == 1)
  }
}

extension StoreTests {
  @Test func writeThenEvictInOneTransactionStaysEvicted() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.write { tx in
      try tx.apply(table: "notes", pk: "a", op: .insert, columns: ["v": 1])
      #expect(try tx.evict(table: "notes", pk: "a"))
    }
    #expect(try store.isEvicted(table: "notes", pk: "a"))
    #expect(!scratch.exists(try store.file("notes", "a")))
  }

  @Test func aDefaultWriteDoesNotRewindTheClock() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(table: "notes", pk: "a", op: .insert)
    try store.collection("notes").upsert(["id": "b"], writeStrategy: .insertDefaultIfAbsent)
    let fresh = try Store(at: scratch.url)
    try fresh.apply(table: "notes", pk: "c", op: .insert)
    let ops = try store.ops()
    let a = try #require(ops.first { $0.pk == "a" })
    let c = try #require(ops.first { $0.pk == "c" })
    #expect(a.hlc < c.hlc)
  }

  @Test func anEmptyReplicaFileIsReplaced() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try "".write(toFile: store.privateDirectory + "/replica", atomically: true, encoding: .utf8)
    let reopened = try Store(at: scratch.url)
    #expect(reopened.replicaID.count == 16)
    #expect(try Store(at: scratch.url).replicaID == reopened.replicaID)
  }
}
