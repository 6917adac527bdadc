import Foundation
import Testing

@testable import Folio

/// The persistent order index: kept up to date by Folio's writes, and
/// repaired from stat data after changes made behind Folio's back.
@Suite(.serialized)
struct OrderIndexTests {
  static let yaml = "version: 1\ntables:\n  t:\n    path: t\n    order: [rank]\n"

  func makeTable(_ count: Int) throws -> (Store, Scratch) {
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

  /// Waits out the racy window, so that later checks trust stat data alone.
  func settle() { usleep(UInt32(FileStat.racyMargin / 1000) + 50_000) }

  @Test func aLimitedPageReadsOnlyWhatItReturns() throws {
    let (store, scratch) = try makeTable(60)
    defer { scratch.remove() }
    settle()
    _ = try pks(store)  // builds the index, reading every document once
    let folder = store.directory(of: try store.table(named: "t"))
    let before = QueryStatistics.documentsRead(folder: folder)
    let page = try pks(store) { try $0.startAfter(200, key: "d20").limitToFirst(3) }
    #expect(page == ["d21", "d22", "d23"])
    #expect(QueryStatistics.documentsRead(folder: folder) - before == 3)
    // A fresh handle (as a new process would) loads the index from disk.
    let again = try Store(at: scratch.url)
    let before2 = QueryStatistics.documentsRead(folder: folder)
    #expect(try pks(again) { try $0.limitToLast(2) } == ["d58", "d59"])
    #expect(QueryStatistics.documentsRead(folder: folder) - before2 == 2)
  }

  @Test func editsDeletesAndAddsBehindFoliosBack() throws {
    let (store, scratch) = try makeTable(30)
    defer { scratch.remove() }
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d0", "d1"])
    // In place, same size, right away (inside the racy window).
    try scratch.write("t/d5.json", #"{"id": "d5", "pad": "x", "rank": -1}"# + "\n")
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d5", "d0"])
    settle()
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d5", "d0"])
    // In place again after the window: only stat data can tell.
    try scratch.write("t/d5.json", #"{"id": "d5", "pad": "x", "rank": 999}"# + "\n")
    #expect(try pks(store) { try $0.limitToLast(1) } == ["d5"])
    try FileManager.default.removeItem(atPath: scratch.path + "/t/d0.json")
    try scratch.write("t/new.json", #"{"id": "new", "rank": 5}"#)
    // cp of another document over an existing one.
    try FileManager.default.removeItem(atPath: scratch.path + "/t/d7.json")
    try FileManager.default.copyItem(
      atPath: scratch.path + "/t/d29.json", toPath: scratch.path + "/t/d7.json")
    #expect(try pks(store) { try $0.limitToFirst(3) } == ["new", "d1", "d2"])
    #expect(try pks(store) { try $0.equalTo(290) } == ["d29", "d7"])
    #expect(try store.collection("t").query().count() == 30)
    // A second handle, as another process would see it.
    #expect(try pks(try Store(at: scratch.url)) { try $0.limitToFirst(3) } == ["new", "d1", "d2"])
  }

  @Test func foliosOwnWritesUpdateTheIndex() throws {
    let (store, scratch) = try makeTable(20)
    defer { scratch.remove() }
    _ = try pks(store)
    try store.apply(table: "t", pk: "d3", op: .update, columns: ["rank": -5])
    try store.collection("t").findByID("d0").remove()
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d3", "d1"])
    let log = try #require(scratch.read(".git/folio/index/t-t.log"))
    #expect(log.contains(#""pk":"d3""#))
    #expect(log.contains(#""gone":true"#))
  }

  @Test func gitCheckoutBehindFoliosBack() throws {
    let (store, scratch) = try makeTable(10)
    defer { scratch.remove() }
    func git(_ args: String) throws {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/git")
      process.arguments =
        ["-C", scratch.path, "-c", "user.name=t", "-c", "user.email=t@t"]
        + args.split(separator: " ").map(String.init)
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      process.waitUntilExit()
      #expect(process.terminationStatus == 0, "git \(args)")
    }
    try git("add -A")
    try git("commit -qm one")
    try store.apply(table: "t", pk: "d9", op: .update, columns: ["rank": -1])
    try store.collection("t").findByID("d1").remove()
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d9", "d0"])
    settle()
    try git("checkout -q -- t")
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d0", "d1"])
    #expect(try pks(store) { try $0.limitToLast(1) } == ["d9"])
  }

  @Test func aChangedConfigRebuildsAndAGarbledIndexIsIgnored() throws {
    let (store, scratch) = try makeTable(5)
    defer { scratch.remove() }
    #expect(try pks(store) { try $0.limitToFirst(1) } == ["d0"])
    try scratch.write(".git/folio/index/t-t.base", "garbage")
    try scratch.write(".git/folio/index/t-t.log", "{\"not\": \"a log\"}\n{{{")
    #expect(try pks(try Store(at: scratch.url)) { try $0.limitToLast(1) } == ["d4"])
    try scratch.write("folio.yaml", "version: 1\ntables:\n  t:\n    path: t\n    order: [pad, rank]\n")
    let changed = try Store(at: scratch.url)
    #expect(try pks(changed) { try $0.orderBy(child: "rank").limitToLast(1) } == ["d4"])
    #expect(try pks(changed) { try $0.limitToFirst(2) } == ["d0", "d1"])
  }

  @Test func aBrokenDocumentIsReportedWithItsPosition() throws {
    let (store, scratch) = try makeTable(3)
    defer { scratch.remove() }
    _ = try pks(store)
    try scratch.write("t/d1.json", "{\"id\": \"d1\",\n  \"rank\": }\n")
    let error = #expect(throws: FolioError.self) { try pks(store) }
    #expect(error?.description.hasPrefix("t/d1.json:2:11: error:") == true, "\(String(describing: error))")
    try scratch.write("t/d1.json", "{\"id\": \"d1\", \"rank\": 100}\n")
    #expect(try pks(store) == ["d0", "d2", "d1"])
  }
}
