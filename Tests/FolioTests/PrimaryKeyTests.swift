import Folio
import FolioCore
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

struct PrimaryKeyTests {
  @Test(
    arguments: [
      ("3f2a", "3f2a.json"),
      ("a/b", "a%2Fb.json"),
      ("a b", "a%20b.json"),
      ("100%", "100%25.json"),
      ("a\u{0}b", "a%00b.json"),
      ("é", "%C3%A9.json"),
      ("x..y", "x..y.json"),
      ("..x", nil),
      ("../x", nil),
      (".", nil),
      ("..", nil),
      (".hidden", nil),
      ("", nil),
      // 239 + ".json" is 244 bytes: with the temp name's 11 it is 255.
      (String(repeating: "a", count: 239), "\(String(repeating: "a", count: 239)).json"),
      (String(repeating: "a", count: 240), nil),
      (String(repeating: "a", count: 250), nil),
      (String(repeating: "/", count: 90), nil),
    ] as [(String, String?)])
  func encoding(_ pk: String, _ expected: String?) throws {
    if let expected {
      let name = try PrimaryKey.fileName(for: pk)
      #expect(name == expected)
      #expect(!name.contains("/"))
      #expect(PrimaryKey.pk(fromFileName: name) == pk)
    } else {
      let error = #expect(throws: FolioError.self) { try PrimaryKey.fileName(for: pk) }
      // A name too long for the file system is a local limit, not a bad pk.
      #expect(error?.code == (pk.utf8.count > 80 ? .localConstraint : .invalidPK))
    }
  }

  @Test(arguments: [
    "a%2fb.json", "a b.json", "%ZZ.json", ".x.json", "x.txt", ".json", "%C3.json", "a%41.json",
  ])
  func nonCanonicalNamesAreNotDocuments(_ name: String) {
    #expect(PrimaryKey.pk(fromFileName: name) == nil)
  }

  @Test func randomPKsRoundTrip() throws {
    let seed = JSONRandom.seed()
    var generator = JSONRandom(seed: seed)
    for _ in 0..<2000 {
      let length = Int.random(in: 1...20, using: &generator)
      let scalars = (0..<length).map { _ in
        Character(Unicode.Scalar(UInt32.random(in: 0...0x2FF, using: &generator)) ?? "x")
      }
      let pk = String(scalars)
      guard let name = try? PrimaryKey.fileName(for: pk) else {
        #expect(pk.hasPrefix("."), "seed \(seed): \(pk.debugDescription) has no file name")
        continue
      }
      #expect(PrimaryKey.pk(fromFileName: name) == pk, "seed \(seed): \(pk.debugDescription) as \(name)")
      #expect(!name.contains("/") && name != "." && name != "..", "seed \(seed): \(name)")
    }
  }

  @Test func generatedPKsSortByTimeAndDiffer() throws {
    let a = PrimaryKey.generate()
    waitForNextMillisecond()
    let b = PrimaryKey.generate()
    #expect(a.count == 26 && b.count == 26)
    #expect(a < b)
    #expect(Set((0..<1000).map { _ in PrimaryKey.generate() }).count == 1000)
    try PrimaryKey.validate(a)
  }

  /// An import's pks sort in the order its clock made them, within one
  /// millisecond too; two replicas at the same stamp still differ.
  @Test func pksFromStampsSortInStampOrder() throws {
    var last: HLC? = HLC(wall: 1_765_000_000_000, counter: 9990, replica: "r1")
    var pks: [String] = []
    for _ in 0..<40 {
      last = HLC.next(after: last, now: 1_765_000_000_000, replica: "r1")
      pks.append(PrimaryKey.generate(at: last!))
    }
    #expect(pks.allSatisfy { $0.count == 26 })
    #expect(pks == pks.sorted(), "\(pks)")
    #expect(Set(pks).count == pks.count)
    let stamp = HLC(wall: 5, counter: 1, replica: "r")
    #expect(PrimaryKey.generate(at: stamp) != PrimaryKey.generate(at: stamp))
    #expect(PrimaryKey.generate(at: stamp).hasPrefix("0000000005001"))
    try PrimaryKey.validate(pks[0])
  }

  @Test func noDocumentLandsOutsideItsTable() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    for pk in ["a/b", "%2F..%2F", "x\\y", "a\u{0}"] {
      try store.apply(table: "notes", pk: pk, op: .insert, columns: ["v": 1])
      #expect(try store.collection("notes").findByID(pk).exec()?["v"] == 1)
    }
    let notes = try store.table(named: "notes")
    let names = try #require(try notes.listDocumentNames(in: scratch.path + "/notes"))
    #expect(names.count == 4)
    #expect(names.allSatisfy { notes.pk(fromDocumentName: $0) != nil }, "\(names)")
    #expect(Set(try store.collection("notes").allPKs()) == ["a/b", "%2F..%2F", "x\\y", "a\u{0}"])
    for pk in ["../x", "", "."] {
      let error = #expect(throws: FolioError.self) {
        try store.apply(table: "notes", pk: pk, op: .insert)
      }
      #expect(error?.code == .invalidPK)
    }
  }
}
