import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Glibc
import Testing

@_spi(Testing) @testable import FolioIndexDaemon
@testable import FolioQuery

/// Cheap staleness checks: inotify in the process that queries, and a
/// publisher that vouches for the index to fresh processes.
@Suite(.serialized)
struct IndexWatchTests {
  static let yaml = "version: 1\ntables:\n  t:\n    path: t\n    order: [rank]\n"

  func makeTable(_ count: Int) throws -> (Store, Scratch) {
    QueryStatistics.enable()
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    try store.write { tx in
      for i in 0..<count {
        try tx.apply(table: "t", pk: "d\(i)", op: .insert, columns: ["rank": .integer(i * 10), "pad": "x"])
      }
    }
    return (store, scratch)
  }

  func pks(_ store: Store, _ build: (Query) throws -> Query = { $0 }) throws -> [String] {
    try build(store.collection("t").query()).get().map(\.pk)
  }

  func folder(_ store: Store) throws -> String { store.directory(of: try store.table(named: "t")) }

  func checks(_ store: Store) throws -> (full: Int, changed: Int, trusted: Int) {
    let folder = try folder(store)
    return (
      QueryStatistics.checks(.full, folder: folder), QueryStatistics.checks(.changed, folder: folder),
      QueryStatistics.checks(.trusted, folder: folder)
    )
  }

  func settle(_ store: Store) throws { waitPastRacyWindow(of: try folder(store)) }

  /// The absolute path of document `pk`'s file, in the table's layout.
  func path(_ store: Store, _ pk: String) throws -> String {
    store.rootPath + "/" + (try store.file("t", pk))
  }

  func document(_ pk: String, rank: Int, pad: String = "x") -> String {
    #"{"id": "\#(pk)", "pad": "\#(pad)", "rank": \#(rank)}"# + "\n"
  }

  // MARK: In process

  @Test func editsAfterTheFirstQueryAreFoundWithoutAFullCheck() throws {
    let (store, scratch) = try makeTable(40)
    defer { scratch.remove() }
    try settle(store)
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d0", "d1"])
    let start = try checks(store)
    #expect(start.full == 1)
    let reads = QueryStatistics.documentsRead(folder: try folder(store))

    // In place, same size, outside the racy window: stat data would need a
    // stat of this very file; the event names it.
    try scratch.write(try store.file("t", "d5"), document("d5", rank: -1))
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d5", "d0"])
    // One re-read plus the two documents returned.
    #expect(QueryStatistics.documentsRead(folder: try folder(store)) - reads == 3)
    // Twice within one clock tick, same size: only the event can tell.
    try scratch.write(try store.file("t", "d5"), document("d5", rank: 7))
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d0", "d5"])
    try scratch.write(try store.file("t", "d5"), document("d5", rank: 8))
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d0", "d5"])
    try scratch.write(try store.file("t", "d5"), document("d5", rank: 999))
    #expect(try pks(store) { try $0.limitToLast(1) } == ["d5"])

    // An editor's save by rename, a delete, a new file, cp over a document.
    let d6 = try store.file("t", "d6")
    let swap = FileSystem.split(d6).directory + "/.d6.json.swp"
    try scratch.write(swap, document("d6", rank: -5))
    #expect(rename(scratch.path + "/" + swap, scratch.path + "/" + d6) == 0)
    try FileManager.default.removeItem(atPath: try path(store, "d0"))
    try scratch.write(try store.file("t", "new"), document("new", rank: -3))
    try FileManager.default.removeItem(atPath: try path(store, "d7"))
    try FileManager.default.copyItem(atPath: try path(store, "d39"), toPath: try path(store, "d7"))
    #expect(try pks(store) { try $0.limitToFirst(3) } == ["d6", "new", "d1"])
    #expect(try pks(store) { try $0.equalTo(390) } == ["d39", "d7"])
    #expect(try store.collection("t").query().count() == 40)
    // vim's way: the original renamed away, a new file written in its place.
    let d8 = try store.file("t", "d8")
    #expect(rename(scratch.path + "/" + d8, scratch.path + "/" + d8 + "~") == 0)
    try scratch.write(d8, document("d8", rank: -100))
    try FileManager.default.removeItem(atPath: scratch.path + "/" + d8 + "~")
    #expect(try pks(store) { try $0.limitToFirst(1) } == ["d8"])
    // A write through Folio.
    try store.apply(table: "t", pk: "d9", op: .update, columns: ["rank": -200])
    #expect(try pks(store) { try $0.limitToFirst(1) } == ["d9"])

    let end = try checks(store)
    #expect(end.full == start.full, "no query after the first took a full stat check")
    #expect(end.changed > start.changed)
  }

  @Test func lostEventsMeanAFullCheck() throws {
    let (store, scratch) = try makeTable(10)
    defer { scratch.remove() }
    #expect(try pks(store) { try $0.limitToFirst(1) } == ["d0"])
    let start = try checks(store)
    // Overflow the event queue with attribute changes on three files in
    // turn (identical neighbours would coalesce), then edit a document: its
    // event is dropped with the rest.
    let limit =
      Int(
        (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
          .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16384
    let names = try ["d1", "d2", "d3"].map { try path(store, $0) }
    // Other tests' queries in this process drain the same queue; none may
    // run until it has overflowed.
    try OrderIndexCache.withoutDraining {
      for i in 0..<(limit + 100) { #expect(utimensat(AT_FDCWD, names[i % 3], nil, 0) == 0) }
      try scratch.write(try store.file("t", "d4"), document("d4", rank: -1, pad: "longer"))
    }
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d4", "d0"])
    #expect(try checks(store).full == start.full + 1)
    // And then it is watched again.
    try scratch.write(try store.file("t", "d4"), document("d4", rank: 1000))
    #expect(try pks(store) { try $0.limitToLast(1) } == ["d4"])
    #expect(try checks(store).full == start.full + 1)
  }

  @Test func aFolderMovedAwayAndReplacedMeansAFullCheck() throws {
    let (store, scratch) = try makeTable(5)
    defer { scratch.remove() }
    #expect(try pks(store) { try $0.limitToFirst(1) } == ["d0"])
    let start = try checks(store)
    try FileManager.default.moveItem(atPath: scratch.path + "/t", toPath: scratch.path + "/t.old")
    try FileManager.default.copyItem(atPath: scratch.path + "/t.old", toPath: scratch.path + "/t")
    try scratch.write(try store.file("t", "d3"), document("d3", rank: -1))
    #expect(try pks(store) { try $0.limitToFirst(1) } == ["d3"])
    #expect(try checks(store).full == start.full + 1)
    // The edit in the old folder is not this table's any more.
    try scratch.write(
      "t.old/" + (try store.table(named: "t").documentName(for: "d2")), document("d2", rank: -10))
    try scratch.write(try store.file("t", "d1"), document("d1", rank: -5))
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d1", "d3"])
    #expect(try checks(store).full == start.full + 1)
  }

  // MARK: Publisher

  /// Checks the index as a fresh process would: its own index state and
  /// watch, asking the publisher. Returns the pks in order.
  func freshQuery(_ store: Store, afterAnswer: @escaping () -> Void = {}) throws -> [String] {
    let table = try store.table(named: "t")
    let indexDirectory = store.privateDirectory + "/index"
    let index = TableIndex(table: table, folder: store.directory(of: table), indexDirectory: indexDirectory)
    try index.load()
    let watcher = IndexWatcher()
    try index.verify(
      contents: true, watcher: watcher, key: "fresh",
      drain: {
        _ = watcher.map { watcher in
          watcher.drain { _, watch, event in index.note(event, watch: watch, watcher: watcher, key: "fresh") }
        }
      },
      publisher: {
        let reply = IndexPublisherClient.ask(
          indexDirectory: indexDirectory, table: "t", signature: index.signature)
        afterAnswer()
        return reply
      })
    if let watch = index.watch { watcher?.unwatch(watch, owner: "fresh") }
    var range = MergedRange(runs: IndexSnapshot(index).runs(key: 0, constant: .null), lower: nil, upper: nil)
    var pks: [String] = []
    while let pk = range.next() { pks.append(pk) }
    return pks
  }

  @Test func aFreshProcessTrustsALivePublisherAndOnlyThatOne() throws {
    let (store, scratch) = try makeTable(30)
    defer { scratch.remove() }
    try settle(store)
    let publisher = try store.publishIndexes()
    // The first answer waits for the publisher's own first full check.
    let indexDirectory = store.privateDirectory + "/index"
    #expect(IndexPublisherClient.ask(indexDirectory: indexDirectory, table: "t", signature: "other") == nil)
    // One publisher per store.
    let second = #expect(throws: FolioError.self) { try Store(at: scratch.url).publishIndexes() }
    #expect(second?.code == .locked)

    try scratch.write(try store.file("t", "d5"), document("d5", rank: -1))
    let start = try checks(store)
    #expect(try freshQuery(store).prefix(2) == ["d5", "d0"])
    var now = try checks(store)
    #expect(now.trusted == start.trusted + 1)
    #expect(now.full == start.full)

    // Changes of every kind, right before the question: the publisher
    // drains its watch when asked.
    try scratch.write(try store.file("t", "d5"), document("d5", rank: 1000))
    try FileManager.default.removeItem(atPath: try path(store, "d0"))
    let d6 = try store.file("t", "d6")
    let temp = FileSystem.split(d6).directory + "/.tmp"
    try scratch.write(temp, document("d6", rank: -2))
    #expect(rename(scratch.path + "/" + temp, scratch.path + "/" + d6) == 0)
    try scratch.write(try store.file("t", "new"), document("new", rank: -3))
    let order = try freshQuery(store)
    #expect(order.prefix(3) == ["new", "d6", "d1"])
    #expect(order.last == "d5")
    #expect(order.count == 30)
    now = try checks(store)
    #expect(now.trusted == start.trusted + 2)
    #expect(now.full == start.full)

    // A write through Folio in another process appends to the log after
    // the publisher's answer: the asker re-checks what follows the answer.
    try store.apply(table: "t", pk: "d9", op: .update, columns: ["rank": -50])
    #expect(try freshQuery(store).first == "d9")

    // A record another process appends after the answer, from a read made
    // before the last edit, is checked again, not trusted.
    let old = try #require(FileStat.of(try path(store, "d3")))
    try settle(store)
    try scratch.write(try store.file("t", "d3"), document("d3", rank: -70))
    let stale = {
      let entry = IndexEntry(
        stat: old, checkedAt: old.ctime + 2 * FileStat.racyMargin, values: [.integer(30)])
      try? IndexNames.append(
        IndexLog.encode(.document(pk: "d3", entry: entry)), to: indexDirectory + "/t-t.log")
    }
    #expect(try freshQuery(store, afterAnswer: stale).prefix(2) == ["d3", "d9"])
    // The publisher repairs it for the next asker too.
    #expect(try freshQuery(store).prefix(2) == ["d3", "d9"])

    // Without the publisher, a fresh process takes the full check.
    now = try checks(store)
    publisher.stop()
    publisher.stop()
    try scratch.write(try store.file("t", "d1"), document("d1", rank: -80))
    #expect(try freshQuery(store).first == "d1")
    #expect(try checks(store).full == now.full + 1)
    #expect(try checks(store).trusted == now.trusted)
  }

  @Test func aDeadPublishersSocketIsNotTrusted() throws {
    let (store, scratch) = try makeTable(5)
    defer { scratch.remove() }
    let directory = store.privateDirectory + "/index"
    try FileSystem.makeDirectories(directory)
    // A socket bound and never served, as a killed publisher leaves it.
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    let bound = IndexPublisherClient.withSocketAddress(indexDirectory: directory) { bind(fd, $0, $1) }
    #expect(bound == 0)
    close(fd)
    #expect(FileManager.default.fileExists(atPath: directory + "/" + IndexPublisher.socketName))
    #expect(IndexPublisherClient.ask(indexDirectory: directory, table: "t", signature: "") == nil)
    let start = try checks(store)
    #expect(try freshQuery(store).first == "d0")
    #expect(try checks(store).full == start.full + 1)
    // A new publisher takes the place over.
    let publisher = try store.publishIndexes()
    defer { publisher.stop() }
    _ = IndexPublisherClient.ask(indexDirectory: directory, table: "t", signature: "")
    #expect(try freshQuery(store).first == "d0")
    #expect(try checks(store).trusted == start.trusted + 1)
  }

  @Test func theFolioBinaryAsksThePublisher() throws {
    let (store, scratch) = try makeTable(20)
    defer { scratch.remove() }
    let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
      .appendingPathComponent("folio").path
    try #require(FileManager.default.isExecutableFile(atPath: binary), "build the folio binary first")
    let publisher = try store.publishIndexes()
    defer { publisher.stop() }
    let indexDirectory = store.privateDirectory + "/index"
    let answered = IndexPublisher.cleanAnswerCount(indexDirectory: indexDirectory)
    try scratch.write(try store.file("t", "d7"), document("d7", rank: -1))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = ["-C", scratch.path, "query", "t", "--limit-to-first", "2"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    let ids = String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
      (try? JSONValue(parsing: String($0)))?["id"]?.stringValue
    }
    #expect(ids == ["d7", "d0"])
    #expect(IndexPublisher.cleanAnswerCount(indexDirectory: indexDirectory) > answered)
  }
}
