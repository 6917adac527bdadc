import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Synchronization
import Testing

@testable import FolioQuery

/// The packed document cache: scans read it instead of the files, never
/// trust a record the files contradict, and rebuild it when it is damaged.
@Suite(.serialized)
struct DocumentPackTests {
  static let yaml = "version: 1\ntables:\n  t:\n    path: t\n    order: [n]\n"

  func store(_ count: Int = 50) throws -> (Store, Scratch) {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    try store.write { tx in
      for i in 0..<count {
        _ = try tx.put(table: "t", pk: "k\(i)", document: ["n": .integer(i), "s": .string("v\(i % 5)")])
      }
    }
    // Past the racy window: stat data alone now vouches for the files.
    waitPastRacyWindow(of: scratch.path + "/t")
    return (store, scratch)
  }

  /// A scan by an unindexed path, with a filter: its documents, and how many
  /// files it read.
  func scan(_ store: Store, _ filter: String = "exists(s)") throws -> (pks: [String], files: Int) {
    let folder = store.directory(of: try store.table(named: "t"))
    let before = QueryStatistics.documentsRead(folder: folder)
    let docs = try store.collection("t").query().orderBy(child: "s").where(filter).get()
    return (
      docs.map { "\($0.pk):\($0.value["s"]!.compactString)" },
      QueryStatistics.documentsRead(folder: folder) - before
    )
  }

  /// A store with more documents than a query reads before it reads the
  /// pack, the table's folder, and how many documents it holds.
  func wideStore() throws -> (Store, Scratch, folder: String, count: Int) {
    let count = PackedDocuments.minimumReads + 100
    let (store, scratch) = try store(count)
    return (store, scratch, store.directory(of: try store.table(named: "t")), count)
  }

  func packPath(_ store: Store) throws -> String {
    PackedDocuments.path(store: store, table: try store.table(named: "t"))
  }

  /// An index built from the files (written behind Folio's back, as an
  /// import or a checkout leaves them) fills the packed cache from the same
  /// reads: the scan after it reads no file, and the pack is in place only
  /// once, not over one another process made.
  @Test func anIndexBuiltFromTheFilesFillsThePack() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    let count = 120
    for i in 0..<count {
      try scratch.write(try store.file("t", "k\(i)"), #"{"id": "k\#(i)", "n": \#(i), "s": "v\#(i % 5)"}"#)
    }
    waitPastRacyWindow(of: scratch.path + "/t")
    let folder = store.directory(of: try store.table(named: "t"))
    #expect(!FileManager.default.fileExists(atPath: try packPath(store)))
    let before = QueryStatistics.documentsRead(folder: folder)
    #expect(try store.collection("t").query().orderBy(child: "n").limitToFirst(1).get().map(\.pk) == ["k0"])
    // Each file once for the index (and the page's one document).
    #expect(QueryStatistics.documentsRead(folder: folder) - before <= count + 1)
    #expect(FileManager.default.fileExists(atPath: try packPath(store)))
    let scanned = try scan(store)
    #expect(scanned.pks.count == count && scanned.files == 0)
    #expect(!FileManager.default.fileExists(atPath: try packPath(store) + ".fill"))
  }

  /// A first import writes the table's packed cache as it stages: the
  /// scan after it reads only the files written too late to be trusted
  /// (within the racy margin before landing), and an edit behind Folio's
  /// back after the import shows through.
  @Test func aFirstImportFillsThePack() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    let early = PackedDocuments.minimumReads + 500
    let late = 20
    let input = (0..<(early + late)).map { #"{"id": "k\#($0)", "n": \#($0), "s": "v\#($0 % 5)"}"# }
    try scratch.write("in.ndjson", input.joined(separator: "\n") + "\n")
    var options = ImportOptions(path: scratch.path + "/in.ndjson")
    options.format = .ndjson
    options.commit = false
    let staging = store.privateDirectory + "/import/docs"
    let calls = Mutex(0)
    // Before the late rows, wait until every early file is staged and past
    // the racy margin: those are trusted, the late ones are not.
    options.shouldStop = { @Sendable in
      if calls.withLock({
        $0 += 1
        return $0
      }) == early + 1 {
        eventually { ((try? FileManager.default.contentsOfDirectory(atPath: staging))?.count ?? 0) == early }
        waitPastRacyWindow(of: staging)
      }
      return false
    }
    let summary = try store.importRows(into: "t", options: options)
    #expect(summary.created == early + late)
    let packSize =
      (try? FileManager.default.attributesOfItem(atPath: try packPath(store))[.size] as? Int) ?? 0
    #expect(packSize > early * 40)
    let first = try scan(store)
    #expect(first.pks.count == early + late)
    // Only the late files are read: by the index build, again by the check
    // (their entries are racy), and for the scan.
    #expect(first.files <= 3 * late)
    waitPastRacyWindow(of: scratch.path + "/t")
    _ = try scan(store)
    #expect(try scan(store).files == 0)
    try scratch.write(try store.file("t", "k3"), "{\"id\": \"k3\", \"n\": 3, \"s\": \"v9\"}\n")
    // The edited file is read by the index check, and for the scan.
    let edited = try scan(store)
    #expect(edited.files == 2 && edited.pks.contains("k3:\"v9\"") && edited.pks.count == early + late)
  }

  /// An import that writes one pk twice leaves no pack: two records of a
  /// document could carry the same stat data.
  @Test func anImportWritingAPKTwiceLeavesNoPack() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    try scratch.write(
      "in.ndjson", #"{"id": "a", "n": 1, "s": "x"}"# + "\n" + #"{"id": "a", "n": 1, "s": "y"}"# + "\n")
    var options = ImportOptions(path: scratch.path + "/in.ndjson")
    options.format = .ndjson
    options.mode = .upsert
    options.commit = false
    try store.importRows(into: "t", options: options)
    #expect(!FileManager.default.fileExists(atPath: try packPath(store)))
    #expect(try scan(store).pks == ["a:\"y\""])
  }

  @Test func aSecondScanReadsThePackAndAnEditShowsThrough() throws {
    let (store, scratch) = try store()
    defer { scratch.remove() }
    // The index reads each file once as it is built, and fills the pack
    // from those reads.
    let first = try scan(store)
    #expect(first.files == 50 && first.pks.count == 50)
    let second = try scan(store)
    #expect(second.files == 0 && second.pks == first.pks)
    // Edits behind Folio's back: in place with the same size, and a new file.
    try scratch.write(try store.file("t", "k7"), "{\"id\": \"k7\", \"n\": 7, \"s\": \"v9\"}\n")
    try scratch.write(try store.file("t", "k70"), "{\"id\": \"k70\", \"n\": 70, \"s\": \"v0\"}\n")
    // Each changed file is read by the index check, and for the pack.
    let third = try scan(store)
    #expect(third.files == 4)
    #expect(third.pks.contains("k7:\"v9\"") && third.pks.contains("k70:\"v0\"") && third.pks.count == 51)
    // A mutation, and a delete.
    try store.apply(table: "t", pk: "k8", op: .update, columns: ["s": "v8"])
    try FileManager.default.removeItem(at: scratch.url.appending(path: try store.file("t", "k9")))
    let fourth = try scan(store, "s == \"v8\" || s == \"v4\"")
    #expect(
      fourth.pks == [
        "k14:\"v4\"", "k19:\"v4\"", "k24:\"v4\"", "k29:\"v4\"", "k34:\"v4\"", "k39:\"v4\"",
        "k4:\"v4\"", "k44:\"v4\"", "k49:\"v4\"", "k8:\"v8\"",
      ])
  }

  @Test(arguments: ["flip", "truncate", "header", "garbage"])
  func aDamagedPackIsFoundAndRebuilt(_ damage: String) throws {
    let (store, scratch) = try store()
    defer { scratch.remove() }
    let expected = try scan(store)
    #expect(try scan(store).files == 0)
    let path = try packPath(store)
    var bytes = try #require(try FileSystem.read(path))
    switch damage {
    case "flip": bytes[bytes.count / 2] ^= 0x20  // inside some record
    case "truncate": bytes.removeLast(bytes.count / 3)  // mid-record, as a kill mid-append leaves it
    case "header": bytes[3] = UInt8(ascii: "X")
    default: bytes += [UInt8](repeating: 7, count: 100)  // a torn append
    }
    try FileSystem.writeAtomically(path, bytes, sync: false)
    let damaged = try scan(store)
    #expect(damaged.pks == expected.pks, "\(damage)")
    #expect(damaged.files > 0 || damage == "garbage")
    // Rewritten whole: every record intact, and the next scan reads no file.
    let pack = try #require(
      DocumentPack.open(path, signature: PackedDocuments.signature(try store.table(named: "t"))))
    var records = 0
    #expect(pack.forEachRecord { _ in records += 1 })
    #expect(records == 50)
    #expect(try scan(store) == (expected.pks, 0))
  }

  @Test func aRecordIsTrustedOnlyWithTheIndexStatAndOutsideTheRacyWindow() throws {
    let (store, scratch) = try store(3)
    defer { scratch.remove() }
    _ = try scan(store)
    // A forged record with the right stat data but racy: not trusted.
    let table = try store.table(named: "t")
    let path = try packPath(store)
    let stat = try #require(
      FileStat.of(store.directory(of: table) + "/" + (try table.documentName(for: "k1"))))
    var out = DocumentPack.header(signature: PackedDocuments.signature(table))
    DocumentPack.encode(
      pk: "k1", document: Array("{\"s\":\"forged\"}".utf8), stat: stat, checkedAt: stat.ctime, into: &out)
    try FileSystem.writeAtomically(path, out, sync: false)
    let racy = try scan(store)
    #expect(racy.files == 3 && !racy.pks.contains { $0.contains("forged") })
    // The same record, not racy, but with other stat data: not trusted.
    out = DocumentPack.header(signature: PackedDocuments.signature(table))
    var other = stat
    other.mtime += 1
    DocumentPack.encode(
      pk: "k1", document: Array("{\"s\":\"forged\"}".utf8), stat: other, checkedAt: FileStat.now(), into: &out
    )
    try FileSystem.writeAtomically(path, out, sync: false)
    #expect(try !scan(store).pks.contains { $0.contains("forged") })
  }

  /// The members of the object in `bytes` whose key is one of `keys`, as
  /// (key, value bytes); nil if the bytes are not a compact object.
  func members(_ keys: [String], in bytes: UnsafeRawBufferPointer) -> [(String, [UInt8])]? {
    var found: [(String, [UInt8])] = []
    let compact = CompactMembers.forEach(in: bytes) { key, value in
      let name = String(decoding: key, as: UTF8.self)
      if keys.contains(name) { found.append((name, Array(bytes[value]))) }
      return true
    }
    return compact ? found : nil
  }

  /// The member finder agrees with the parser on what Folio writes, and
  /// gives up on what it does not.
  @Test func compactMembersAgreeWithTheParser() throws {
    let doc: JSONValue = [
      "a": "x,}\"]\\", "b": ["c": [1, ["d": "}"]], "e": "{"], "n": .number("-1.5e3"), "t": true, "z": [],
      "y": .object([:]), "\u{e9}": 1,
    ]
    let bytes = doc.compactBytes()
    for keys in [["a"], ["b", "n"], ["t", "z", "y"], ["missing"], ["a", "b", "n", "t", "z", "y"]] {
      let found = try #require(
        bytes.withUnsafeBytes { members(keys, in: $0) }?.map { ($0.0, try JSONValue(parsing: $0.1)) })
      #expect(found.map(\.0) == keys.filter { doc[$0] != nil }.sorted(), "\(keys)")
      for (key, value) in found { #expect(value == doc[key], "\(key)") }
    }
    for text in ["[1]", "{\"a\":1", "{\"a\":\"x}", "{\"a\":1}x", "{\"a\":{\"b\":1}"] {
      #expect(
        Array(text.utf8).withUnsafeBytes { members(["a"], in: $0) } == nil, "\(text)")
    }
  }

  /// A filter over most of an indexed range reads the pack, judging each
  /// document from the members the filter reads.
  @Test func aWideFilteredRangeReadsThePack() throws {
    let (store, scratch, folder, count) = try wideStore()
    defer { scratch.remove() }
    let query = try store.collection("t").query().where(#"s == "v3" || n < 3"#)
    let expected = (0..<count).filter { $0 % 5 == 3 || $0 < 3 }.map { "k\($0)" }
    #expect(try query.get().map(\.pk) == expected.sorted { Int($0.dropFirst())! < Int($1.dropFirst())! })
    let (reads, packed) = (
      QueryStatistics.documentsRead(folder: folder), QueryStatistics.documentsPacked(folder: folder)
    )
    #expect(try query.count() == expected.count)
    #expect(QueryStatistics.documentsRead(folder: folder) == reads)
    #expect(QueryStatistics.documentsPacked(folder: folder) - packed == count)
  }

  /// A first scan of a table the pack lacks reads each file once for it and
  /// keeps only a bounded number of documents at hand: an ordered scan of
  /// more documents than that still returns every one, and what it read is
  /// in the pack for the next query, which counts in the pack's order.
  @Test func aFirstScanOfManyDocumentsFillsThePackWithFlatMemory() throws {
    let count = PackedDocuments.keptLimit + 200
    let (store, scratch) = try store(count)
    defer { scratch.remove() }
    try? FileManager.default.removeItem(atPath: try packPath(store))
    let folder = store.directory(of: try store.table(named: "t"))
    let docs = try store.collection("t").query().orderBy(child: "s").get()
    #expect(docs.count == count)
    #expect(docs.map { $0.value["s"]!.compactString } == docs.map { $0.value["s"]!.compactString }.sorted())
    #expect(Set(docs.map(\.pk)).count == count)
    let before = QueryStatistics.documentsRead(folder: folder)
    let query = try store.collection("t").query().where(#"s == "v2""#)
    #expect(try query.count() == (0..<count).filter { $0 % 5 == 2 }.count)
    #expect(QueryStatistics.documentsRead(folder: folder) == before)
  }
  /// A filter judged on packed bytes gives the predicate's answer on the
  /// parsed document: random predicates over random documents, and
  /// strings spelled with escapes (as Folio writes some, and as a
  /// hand-made pack could spell any).
  @Test func aPackedFilterAgreesWithThePredicate() throws {
    let seed = SeededGenerator.testSeed()
    var fuzz = QueryFuzz(rng: SeededGenerator(seed: seed))
    try reportingSeed(seed) {
      let escaped: [(text: String, value: JSONObject)] = [
        (#"{"v":"\u0061"}"#, ["v": "a"]), (#"{"v":"a\"b","w":"\\"}"#, ["v": "a\"b", "w": "\\"]),
        (#"{"v":"\u00e9","s":"x"}"#, ["v": "é", "s": "x"]), (#"{"v":"\ud83d\ude00"}"#, ["v": "😀"]),
        (#"{"v":"\n","w":null}"#, ["v": "\n", "w": .null]),
        (#"{"o":{"a":{"b":"\/"}}}"#, ["o": ["a": ["b": "/"]]]),
      ]
      // Numbers that are plain integers (compared without parsing) and
      // every spelling next to them that is not.
      let numbers = [
        "5", "-3", "0", "-0", "1.0", "1e2", "100", "12345678901234567890", "999999999999999999",
        "-999999999999999999", "1234567890123456789", #""5""#, "null", "[5]", "true",
      ].map { text -> (text: String, value: JSONObject) in
        let document = #"{"n":\#(text)}"#
        guard case .object(let object) = try! JSONValue(parsing: document) else { fatalError(document) }
        return (document, object)
      }
      let fixed = [
        #"v == "a""#, #"v == "a\"b""#, #"w == "\\""#, #""é" == v"#, #"v != "😀""#, #"v in ["\n", "x"]"#,
        #"w in [null, true]"#, #"missing == null"#, #"v != null"#, #"o.a.b == "/""#, #"v == true"#,
        #"s in ["x"] && v == "é""#, "n > 4", "n >= 5", "n < 0", "n <= -3", "n == 0", "n != 5", "n == 100",
        "n > 1234567890123456788", "n < 99999999999999999999", "n == 1", "n >= -999999999999999999",
        "n == -0", "5 < n",
      ]
      var spelledDifferently = 0
      for round in 0..<20 {
        var documents: [(bytes: [UInt8], object: JSONObject)] = fuzz.table(count: 40).values.map {
          (JSONValue.object($0).compactBytes(), $0)
        }
        for (text, object) in escaped + numbers {
          documents.append((Array(text.utf8), object))
          #expect(try JSONValue(parsing: text) == .object(object), "\(text)")
        }
        var predicates = fixed
        for _ in 0..<(round == 0 ? 0 : 100) {
          predicates.append(QueryDifferentialTests.predicate(&fuzz).text)
        }
        for text in predicates {
          let predicate = try Predicate(parsing: text)
          let filter = try #require(PackedFilter(predicate), "seed \(seed): \(text)")
          var scratch: [Range<Int>?] = []
          for (bytes, object) in documents {
            let judged = bytes.withUnsafeBytes { filter.matches($0, values: &scratch) }
            #expect(
              judged == predicate.matches(object),
              "seed \(seed): \(text) on \(String(decoding: bytes, as: UTF8.self))")
            if bytes.contains(UInt8(ascii: "\\")) && judged == true { spelledDifferently += 1 }
          }
        }
      }
      // The escaped spellings were matched, not only rejected.
      #expect(spelledDifferently >= 20, "seed \(seed)")
      // Member names that JSON could spell two ways are left to the parser.
      #expect(PackedFilter(try Predicate(parsing: "`é` == 1")) == nil)
      // Bytes that are not compact JSON are left to the parser too.
      let filter = try #require(PackedFilter(try Predicate(parsing: #"v == "a""#)))
      var scratch: [Range<Int>?] = []
      #expect(Array(#"{ "v":"a"}"#.utf8).withUnsafeBytes { filter.matches($0, values: &scratch) } == nil)
    }
  }

  /// Queries on an unchanged index share one check of the pack; an edit
  /// behind Folio's back, a write through Folio and an append to the pack
  /// each make the next query check it again, and every count is right.
  @Test func theCheckedPackIsSharedUntilTheIndexOrThePackChanges() throws {
    let (store, scratch, folder, count) = try wideStore()
    defer { scratch.remove() }
    let query = try store.collection("t").query().where(#"s == "v3""#)
    var expected = (0..<count).filter { $0 % 5 == 3 }.count
    // The first count fills the pack; the second checks the filled pack.
    #expect(try query.count() == expected)
    #expect(try query.count() == expected)
    let checks = QueryStatistics.checks(.pack, folder: folder)
    for _ in 0..<3 { #expect(try query.count() == expected) }
    #expect(QueryStatistics.checks(.pack, folder: folder) == checks)
    // In place, the same size: only the stat data tells.
    try scratch.write(try store.file("t", "k3"), #"{"id":"k3","n":3,"s":"v4"}"#)
    expected -= 1
    #expect(try query.count() == expected)
    #expect(QueryStatistics.checks(.pack, folder: folder) > checks)
    try store.apply(table: "t", pk: "k4", op: .update, columns: ["s": "v3"])
    expected += 1
    #expect(try query.count() == expected)
    // Past the racy window the files read for those two are appended to
    // the pack, and the next query checks the longer pack.
    waitPastRacyWindow(of: scratch.path + "/t")
    #expect(try query.count() == expected)
    let beforeAppend = QueryStatistics.checks(.pack, folder: folder)
    #expect(try query.count() == expected)
    #expect(QueryStatistics.checks(.pack, folder: folder) == beforeAppend + 1)
    #expect(try query.count() == expected)
    #expect(QueryStatistics.checks(.pack, folder: folder) == beforeAppend + 1)
  }

  /// A process that walked the pack against a base alone saves the check;
  /// the next process on that base and pack reads it back instead of
  /// walking. A check saved for another base, another pack or damaged is
  /// not used, and every count is right.
  @Test func aSavedPackCheckSparesTheNextProcessTheWalk() throws {
    let (store, scratch, folder, count) = try wideStore()
    defer { scratch.remove() }
    let table = try store.table(named: "t")
    let query = try store.collection("t").query().where(#"s == "v3""#)
    var expected = (0..<count).filter { $0 % 5 == 3 }.count
    // The first count fills the pack; the second walks it and saves that.
    #expect(try query.count() == expected)
    #expect(try query.count() == expected)
    let check = try packPath(store) + ".check"
    #expect(FileManager.default.fileExists(atPath: check))
    func asANewProcess() throws -> (count: Int, walks: Int, saved: Int) {
      OrderIndexCache.forget(store: store, table: table)
      let (walks, saved) = (
        QueryStatistics.checks(.pack, folder: folder), QueryStatistics.checks(.savedPack, folder: folder)
      )
      let n = try query.count()
      return (
        n, QueryStatistics.checks(.pack, folder: folder) - walks,
        QueryStatistics.checks(.savedPack, folder: folder) - saved
      )
    }
    var run = try asANewProcess()
    #expect(run.count == expected && run.walks == 0 && run.saved == 1)
    // Damaged: ignored, walked, and saved again.
    var bytes = try #require(try FileSystem.read(check))
    bytes[bytes.count / 2] ^= 0x40
    try FileSystem.writeAtomically(check, bytes, sync: false)
    run = try asANewProcess()
    #expect(run.count == expected && run.walks == 1 && run.saved == 0)
    run = try asANewProcess()
    #expect(run.count == expected && run.walks == 0 && run.saved == 1)
    // An edit behind Folio's back: the index is no longer its base alone.
    try scratch.write(try store.file("t", "k3"), #"{"id":"k3","n":3,"s":"v4"}"#)
    expected -= 1
    run = try asANewProcess()
    #expect(run.count == expected && run.walks == 1 && run.saved == 0)
    // A write through Folio, then a new base built from the files: the
    // check saved for the old base is not used; the new one's is.
    try store.apply(table: "t", pk: "k4", op: .update, columns: ["s": "v3"])
    expected += 1
    waitPastRacyWindow(of: scratch.path + "/t")
    #expect(try query.count() == expected)
    let index = store.privateDirectory + "/index/" + IndexNames.fileStem("t")
    try FileManager.default.removeItem(atPath: index + ".base")
    try? FileManager.default.removeItem(atPath: index + ".log")
    run = try asANewProcess()
    #expect(run.count == expected && run.saved == 0 && run.walks == 1)
    run = try asANewProcess()
    #expect(run.count == expected && run.saved == 1 && run.walks == 0)
  }

  /// A scan that reads the pack out of its order writes it again in the
  /// scan's order, so the next scan by that ordering reads it front to
  /// back; a scan in the pack's order leaves it alone.
  @Test func aScanInAnotherOrderWritesThePackInThatOrder() throws {
    let count = PackedDocuments.minimumReads + 100
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    try store.write { tx in
      for i in 0..<count {
        // `r` scatters the documents of `n`'s order all over.
        let r = Int((UInt64(i) &* 0x9E37_79B9_7F4A_7C15) >> 44)
        _ = try tx.put(table: "t", pk: "k\(i)", document: ["n": .integer(i), "r": .integer(r)])
      }
    }
    waitPastRacyWindow(of: scratch.path + "/t")
    let path = try packPath(store)
    func packOrder() throws -> [String] {
      let pack = try #require(
        DocumentPack.open(path, signature: PackedDocuments.signature(try store.table(named: "t"))))
      var pks: [String] = []
      #expect(pack.forEachRecord { pks.append(String(decoding: $0.pk, as: UTF8.self)) })
      return pks
    }
    let collection = store.collection("t")
    let byN = try collection.query().orderBy(child: "n").get().map(\.pk)
    #expect(try packOrder() == byN)
    let byR = try collection.query().orderBy(child: "r").get().map(\.pk)
    #expect(Set(byR) == Set(byN) && byR.count == count && byR != byN)
    #expect(try packOrder() == byR)
    let identity = FileStat.of(path)
    #expect(try collection.query().orderBy(child: "r").get().map(\.pk) == byR)
    #expect(FileStat.of(path) == identity)
    let folder = store.directory(of: try store.table(named: "t"))
    let before = QueryStatistics.documentsRead(folder: folder)
    #expect(try collection.query().orderBy(child: "n").get().map(\.pk) == byN)
    #expect(QueryStatistics.documentsRead(folder: folder) == before)
  }
}
