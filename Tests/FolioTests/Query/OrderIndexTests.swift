import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioGit
@testable import FolioQuery

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
  func settle(_ store: Store) { waitPastRacyWindow(of: store.directory(of: try! store.table(named: "t"))) }

  @Test func aLimitedPageReadsOnlyWhatItReturns() throws {
    let (store, scratch) = try makeTable(60)
    defer { scratch.remove() }
    settle(store)
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

  @Test func orderByANestedPathThroughAnIndexAndByScan() throws {
    let docs: [(String, JSONObject)] = [
      ("d0", ["a": ["b": 30]]), ("d1", ["a": ["b": 10]]), ("d2", ["a": 5]), ("d3", ["z": 1]),
      ("d4", ["a": ["b": "x", "c": 1]]), ("d5", ["a": ["b": 10]]), ("d6", ["a": ["b": nil]]),
      ("d7", ["a": ["b": true]]),
    ]
    // Missing (no a, or an a that is no object) and null first, by pk; then
    // true, numbers, strings; ties by pk.
    let expected = ["d2", "d3", "d6", "d7", "d1", "d5", "d0", "d4"]
    for yaml in [
      "version: 1\ntables:\n  t:\n    path: t\n    order: [a.b]\n",
      "version: 1\ntables:\n  t:\n    path: t\n",
    ] {
      let indexed = yaml.contains("order")
      let (store, scratch) = try makeStore(yaml: yaml)
      defer { scratch.remove() }
      try store.write { tx in
        for (pk, doc) in docs { _ = try tx.put(table: "t", pk: pk, document: .object(doc)) }
      }
      settle(store)
      let q = try store.collection("t").query().orderBy(child: "a.b")
      #expect(try q.get().map(\.pk) == expected, "indexed: \(indexed)")
      let folder = store.directory(of: try store.table(named: "t"))
      let before = QueryStatistics.documentsRead(folder: folder)
      let packedBefore = QueryStatistics.documentsPacked(folder: folder)
      #expect(try q.startAfter(10, key: "d1").limitToFirst(2).get().map(\.pk) == ["d5", "d0"])
      let read = QueryStatistics.documentsRead(folder: folder) - before
      let packed = QueryStatistics.documentsPacked(folder: folder) - packedBefore
      // Through the index only the page is read; a scan reads every
      // document (from the packed cache the first scan wrote).
      #expect(indexed ? read == 2 : read + packed >= docs.count, "indexed: \(indexed), read \(read)")
      #expect(try q.limitToLast(2).get().map(\.pk) == ["d0", "d4"])
      #expect(try q.equalTo(10).get().map(\.pk) == ["d1", "d5"])
      #expect(try q.endAt(nil).get().map(\.pk) == ["d2", "d3", "d6"])
      // Like with like: d4's "x" is no number, so not >= 10.
      #expect(try q.where("a.b >= 10").get().map(\.pk) == ["d1", "d5", "d0"])
      // A nested edit behind Folio's back moves the document.
      try scratch.write(try store.file("t", "d4"), #"{"id": "d4", "a": {"b": -1}}"#)
      #expect(try q.startAt(false).limitToFirst(2).get().map(\.pk) == ["d7", "d4"])
    }
  }

  @Test func editsDeletesAndAddsBehindFoliosBack() throws {
    let (store, scratch) = try makeTable(30)
    defer { scratch.remove() }
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d0", "d1"])
    // In place, same size, right away (inside the racy window).
    try scratch.write(try store.file("t", "d5"), #"{"id": "d5", "pad": "x", "rank": -1}"# + "\n")
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d5", "d0"])
    settle(store)
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d5", "d0"])
    // In place again after the window: only stat data can tell.
    try scratch.write(try store.file("t", "d5"), #"{"id": "d5", "pad": "x", "rank": 999}"# + "\n")
    #expect(try pks(store) { try $0.limitToLast(1) } == ["d5"])
    try FileManager.default.removeItem(atPath: scratch.path + "/" + (try store.file("t", "d0")))
    try scratch.write(try store.file("t", "new"), #"{"id": "new", "rank": 5}"#)
    // cp of another document over an existing one.
    try FileManager.default.removeItem(atPath: scratch.path + "/" + (try store.file("t", "d7")))
    try FileManager.default.copyItem(
      atPath: store.rootPath + "/" + (try store.file("t", "d29")),
      toPath: store.rootPath + "/" + (try store.file("t", "d7")))
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

  /// One document changed over and over (a counter) is one overlay entry
  /// but a log record per change: the log is compacted into the base
  /// before it holds more records than the table has documents (or 1,024),
  /// so a process loading the index never replays a day of increments.
  @Test func aDocumentChangedOverAndOverDoesNotGrowTheLogForever() throws {
    let (store, scratch) = try makeTable(20)
    defer { scratch.remove() }
    _ = try pks(store)
    let logPath = scratch.url.appending(path: ".git/folio/index/t-t.log").path
    var largest = 0
    for i in 0..<1_100 {
      try store.apply(table: "t", pk: "d3", op: .update, columns: ["views": .integer(i)])
      largest = max(largest, Int(FileStat.of(logPath)?.size ?? 0))
    }
    // About 1,024 records of some 120 bytes at most, then a fresh log.
    #expect(largest < 200_000)
    #expect(Int(FileStat.of(logPath)?.size ?? 0) < largest / 4)
    #expect(try store.write { try $0.get(table: "t", pk: "d3") }?.value["views"] == JSONValue.integer(1_099))
    #expect(try pks(store) { try $0.limitToFirst(3) } == ["d0", "d1", "d2"])
  }

  @Test func gitCheckoutBehindFoliosBack() throws {
    let (store, scratch) = try makeTable(10)
    defer { scratch.remove() }
    try git(["add", "-A"], in: scratch.path)
    try git(["commit", "-qm", "one"], in: scratch.path)
    try store.apply(table: "t", pk: "d9", op: .update, columns: ["rank": -1])
    try store.collection("t").findByID("d1").remove()
    #expect(try pks(store) { try $0.limitToFirst(2) } == ["d9", "d0"])
    settle(store)
    try git(["checkout", "-q", "--", "t"], in: scratch.path)
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
    try scratch.write(
      "folio.yaml", withTestLayout("version: 1\ntables:\n  t:\n    path: t\n    order: [pad, rank]\n"))
    let changed = try Store(at: scratch.url)
    #expect(try pks(changed) { try $0.orderBy(child: "rank").limitToLast(1) } == ["d4"])
    #expect(try pks(changed) { try $0.limitToFirst(2) } == ["d0", "d1"])
  }

  /// `find` matches pks as bytes: canonically equal spellings, integers
  /// written two ways and prefixes are all different pks.
  @Test func theBaseFindsAPKByItsBytes() throws {
    let stat = FileStat(inode: 1, size: 1, mtime: 1, ctime: 1)
    var pks = ["caf\u{E9}", "cafe\u{301}", "7", "07", "-1", "a", "ab", ""]
    pks += (0..<500).map { "d\($0)" }
    let entries = pks.map { (pk: $0, entry: IndexEntry(stat: stat, checkedAt: 1, values: [])) }
    let bytes = IndexBase.encode(
      signature: "s", generation: 1, directory: stat, directoryCheckedAt: 1, keyCount: 0, entries: entries)
    let base = try #require(IndexBase(bytes: bytes))
    for pk in pks {
      let doc = try #require(base.find(pk), "\(pk)")
      #expect(Array(base.pk(doc).utf8) == Array(pk.utf8))
    }
    for missing in ["caf", "cafe", "007", "+7", "d500", "d-1", "A"] { #expect(base.find(missing) == nil) }
    // The binary search that answers a process's first lookups agrees.
    for pk in pks {
      let doc = try #require(
        pk.utf8CString.withUnsafeBytes { base.search(UnsafeRawBufferPointer(rebasing: $0.dropLast())) },
        "\(pk)")
      #expect(Array(base.pk(doc).utf8) == Array(pk.utf8))
    }
    for missing in ["caf", "cafe", "007", "+7", "d500", "d-1", "A"] {
      #expect(
        missing.utf8CString.withUnsafeBytes { base.search(UnsafeRawBufferPointer(rebasing: $0.dropLast())) }
          == nil)
    }
  }

  @Test func theBaseListsItsRacyRecords() throws {
    let now = FileStat.now()
    func entry(_ changed: Int64, checked: Int64) -> IndexEntry {
      IndexEntry(
        stat: FileStat(inode: changed, size: 10, mtime: changed, ctime: changed), checkedAt: checked,
        values: [.integer(changed)])
    }
    // Racy: read within the margin of the file's change (either side).
    let entries: [(pk: String, entry: IndexEntry)] = [
      ("a", entry(now - 5 * FileStat.racyMargin, checked: now)),
      ("b", entry(now - FileStat.racyMargin / 2, checked: now)),
      ("c", entry(now - 3 * FileStat.racyMargin, checked: now - 3 * FileStat.racyMargin)),
      ("d", entry(now - 9 * FileStat.racyMargin, checked: now - FileStat.racyMargin)),
    ]
    let bytes = IndexBase.encode(
      signature: "s", generation: 7, directory: FileStat(inode: 1, size: 2, mtime: 3, ctime: 4),
      directoryCheckedAt: 5, keyCount: 1, entries: entries)
    let base = try #require(IndexBase(bytes: bytes))
    #expect(base.racyCount == 2)
    #expect((0..<base.racyCount).map { base.pk(base.racyDocument($0)) } == ["b", "c"])
    #expect(entries.filter { $0.entry.isRacy }.map(\.pk) == ["b", "c"])
    #expect((0..<base.count).map { base.pk($0) } == ["a", "b", "c", "d"])
    #expect(base.value(3, key: 0) == .integer(now - 9 * FileStat.racyMargin))
    #expect(base.signature == "s" && base.generation == 7 && base.directoryCheckedAt == 5)
    // A base of the previous layout is not read: it is rebuilt.
    var old = bytes
    old.replaceSubrange(0..<8, with: Array("FOLIOIX2".utf8))
    #expect(IndexBase(bytes: old) == nil)
    #expect(IndexBase(bytes: Array(bytes.prefix(79))) == nil)
  }

  @Test func theGitFolderIsFoundWithoutLibgit2AsLibgit2FindsIt() throws {
    let (store, scratch) = try makeTable(1)
    defer { scratch.remove() }
    #expect(try GitRepository.gitDirectory(workTree: scratch.path) == scratch.path + "/.git")
    #expect(
      try GitRepository.gitDirectory(workTree: scratch.path)
        == GitRepository.open(workTree: scratch.path)?.gitDirectory)
    #expect(store.gitDirectory == scratch.path + "/.git")
    // A linked worktree has a `.git` file: libgit2 reads it.
    try git(["add", "-A"], in: scratch.path)
    try git(["commit", "-q", "-m", "one"], in: scratch.path)
    let linked = scratch.path + "-linked"
    defer { try? FileManager.default.removeItem(atPath: linked) }
    try git(["worktree", "add", "-q", linked], in: scratch.path)
    #expect(FileSystem.isRegularFile(linked + "/.git"))
    let found = try GitRepository.gitDirectory(workTree: linked)
    #expect(found == scratch.path + "/.git/worktrees/" + FileSystem.split(linked).name)
    #expect(try Store(at: URL(fileURLWithPath: linked)).gitDirectory == found)
    // Not a repository: nil, as from libgit2.
    try FileManager.default.removeItem(atPath: scratch.path + "/.git/HEAD")
    #expect(try GitRepository.gitDirectory(workTree: scratch.path) == nil)
    let empty = Scratch()
    defer { empty.remove() }
    #expect(try GitRepository.gitDirectory(workTree: empty.path) == nil)
  }

  @Test func aBrokenDocumentIsReportedWithItsPosition() throws {
    let (store, scratch) = try makeTable(3)
    defer { scratch.remove() }
    _ = try pks(store)
    try scratch.write(try store.file("t", "d1"), "{\"id\": \"d1\",\n  \"rank\": }\n")
    // Left out and named, not thrown: one file does not take the table down.
    var skipped: [FolioError] = []
    #expect(try store.collection("t").query().get(skipped: &skipped).map(\.pk) == ["d0", "d2"])
    let d1 = try store.file("t", "d1")
    #expect(skipped.map(\.description) == [d1 + ":2:11: error: expected a JSON value, found '}'"])
    try scratch.write(try store.file("t", "d1"), "{\"id\": \"d1\", \"rank\": 100}\n")
    #expect(try pks(store) == ["d0", "d2", "d1"])
  }
}
