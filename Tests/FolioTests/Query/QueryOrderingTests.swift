import Folio
import FolioCore
import FolioJSON
import FolioQuery
import FolioTestSupport
import Foundation
import Testing

/// The ordering rules, against orders written out by hand.
struct QueryOrderingTests {
  static let yaml = """
    version: 1
    tables:
      things:
        path: things
        order: [v]
    """

  /// pk → the value of both `v` (indexed) and `w` (not indexed); nil: missing.
  static let documents: [(String, JSONValue?)] = [
    ("a", "b"), ("01", 10), ("1", 10), ("10", .number("1e1")), ("-5", false), ("2147483648", true),
    ("é", .number("9.5")), ("x1", "😀"), ("x2", "～"), ("x3", [1]), ("x4", ["a": 1]),
    ("big2", .number("12345678901234567891")), ("big1", .number("12345678901234567890")),
    ("m", nil), ("n", .null), ("s", ""), ("z", .number("-0.5e-3")),
  ]

  /// Written out by hand from the rules: null/missing, false, true, numbers
  /// (exactly: 1e1 equals 10), strings by UTF-16 (the emoji's surrogates
  /// D83D come before U+FF5E), arrays and objects alike; ties by pk, with
  /// 32-bit integer pks first and "1" before "01".
  static let expected = [
    "m", "n", "-5", "2147483648", "z", "é", "1", "01", "10", "big1", "big2", "s", "a", "x1", "x2", "x3",
    "x4",
  ]

  static func makeTable() throws -> (Store, Scratch) {
    let (store, scratch) = try makeStore(yaml: yaml)
    try store.write { tx in
      for (pk, value) in documents {
        var columns: [String: JSONValue] = [:]
        if let value {
          columns["v"] = value
          columns["w"] = value
        }
        try tx.apply(table: "things", pk: pk, op: .insert, columns: columns)
      }
    }
    return (store, scratch)
  }

  @Test func mixedTypesInOneColumnThroughTheIndex() throws {
    let (store, scratch) = try Self.makeTable()
    defer { scratch.remove() }
    let things = store.collection("things")
    #expect(try things.query().orderBy(child: "v").get().map(\.pk) == Self.expected)
    // The table's first order key is the default.
    #expect(try things.query().get().map(\.pk) == Self.expected)
    #expect(scratch.exists(".git/folio/index/t-things.base"))
  }

  @Test func mixedTypesInOneColumnByScanning() throws {
    let (store, scratch) = try Self.makeTable()
    defer { scratch.remove() }
    #expect(try store.collection("things").query().orderBy(child: "w").get().map(\.pk) == Self.expected)
  }

  @Test func pkOrder() throws {
    let (store, scratch) = try makeStore(yaml: "version: 1\ntables:\n  k: {}\n")
    defer { scratch.remove() }
    let pks = [
      "a", "1", "-5", "2147483648", "é", "～", "😀", "01", "10", "-2147483648", "-2147483649", "-0", "0",
    ]
    try store.write { tx in
      for pk in pks { try tx.apply(table: "k", pk: pk, op: .insert) }
    }
    let expected = [
      "-2147483648", "-5", "0", "-0", "1", "01", "10", "-2147483649", "2147483648", "a", "é", "😀", "～",
    ]
    #expect(try store.collection("k").query().orderByKey().get().map(\.pk) == expected)
    // No order key: the key is the default.
    #expect(try store.collection("k").query().get().map(\.pk) == expected)
    #expect(try store.collection("k").query().orderByValue().get().map(\.pk) == expected)
    #expect(
      try store.collection("k").query().orderByKey().startAt("1").endBefore("a").get().map(\.pk)
        == ["1", "01", "10", "-2147483649", "2147483648"])
  }

  @Test func rangesAndEqualTo() throws {
    let (store, scratch) = try Self.makeTable()
    defer { scratch.remove() }
    let things = store.collection("things")
    for path in ["v", "w"] {
      let q = try things.query().orderBy(child: path)
      #expect(try q.equalTo(10).get().map(\.pk) == ["1", "01", "10"])
      #expect(try q.equalTo(.number("10.0"), key: "01").get().map(\.pk) == ["01"])
      #expect(try q.startAt(10, key: "01").endAt(.number("1e1"), key: "10").get().map(\.pk) == ["01", "10"])
      #expect(try q.startAfter(10).endBefore("b").get().map(\.pk) == ["big1", "big2", "s"])
      #expect(try q.startAfter(10, key: "1").limitToFirst(2).get().map(\.pk) == ["01", "10"])
      #expect(try q.endAt(true).get().map(\.pk) == ["m", "n", "-5", "2147483648"])
      #expect(try q.startAt(nil).limitToLast(3).get().map(\.pk) == ["x2", "x3", "x4"])
      #expect(try q.startAt("😀").get().map(\.pk) == ["x1", "x2", "x3", "x4"])
      #expect(try q.startAfter("～").get().map(\.pk) == ["x3", "x4"])
      #expect(try q.limitToFirst(3).count() == 3)
      #expect(try q.count() == Self.expected.count)
      #expect(try q.where("v > 9.5").get().map(\.pk) == ["1", "01", "10", "big1", "big2"])
      // Like with like: no number is below a string, and no string above 9.5.
      #expect(try q.where("v > 9.5 && v < \"\"").get().map(\.pk) == [])
      #expect(try q.where("v >= \"\"").get().map(\.pk) == ["s", "a", "x1", "x2"])
      #expect(try q.where("v < 0").get().map(\.pk) == ["z"])
      #expect(try q.where("v >= false").get().map(\.pk) == ["-5", "2147483648"])
      #expect(try q.where("v <= null || v > [0]").get().map(\.pk) == [])
    }
  }

  @Test func stringsCompareByUTF16CodeUnits() {
    let samples = ["", "a", "é", "e\u{301}", "～", "😀", "\u{E000}", "\u{FFFF}", "𝄞", "ab", "a\u{0}", "\u{7F}"]
    for a in samples {
      for b in samples {
        let expected =
          a.utf16.lexicographicallyPrecedes(b.utf16) ? -1 : (Array(a.utf16) == Array(b.utf16) ? 0 : 1)
        #expect(ValueOrdering.compareUTF16(a, b) == expected, "\(a) vs \(b)")
      }
    }
  }

  @Test(arguments: [
    ("1", "1.0", 0), ("10", "1e1", 0), ("-0", "0", 0), ("0.1", "1e-1", 0),
    ("12345678901234567890", "12345678901234567891", -1),
    ("-12345678901234567890", "-12345678901234567891", 1), ("1e400", "1e399", 1), ("-1e-400", "0", -1),
    ("2", "10", -1), ("0.001", "0.0009999", 1), ("100", "99.99999999999999999999", 1),
  ])
  func numbersCompareExactly(_ a: String, _ b: String, _ expected: Int) {
    #expect(ValueOrdering.compare(.number(a), .number(b)) == expected)
    #expect(ValueOrdering.compare(.number(b), .number(a)) == -expected)
  }
}
