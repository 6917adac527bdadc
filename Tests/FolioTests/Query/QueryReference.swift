import Folio
import FolioCore
import FolioJSON
import FolioTestSupport
import Foundation
import Testing

/// A deterministic generator; the seed comes from `FOLIO_TEST_SEED` or is
/// random, and tests print it on failure.
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  static func testSeed() -> UInt64 {
    if let text = ProcessInfo.processInfo.environment["FOLIO_TEST_SEED"], let seed = UInt64(text) {
      return seed
    }
    return UInt64.random(in: 0..<1_000_000_000)
  }
}

/// The ordering rules again, written independently of `ValueOrdering`:
/// Foundation's `Decimal` for numbers, `Array(utf16)` for strings.
enum Reference {
  static func rank(_ v: JSONValue?) -> Int {
    switch v {
    case nil, .null?: 0
    case .bool(false)?: 1
    case .bool(true)?: 2
    case .number?: 3
    case .string?: 4
    case .array?, .object?: 5
    }
  }

  static func compare(_ a: JSONValue?, _ b: JSONValue?) -> Int {
    let (ra, rb) = (rank(a), rank(b))
    if ra != rb { return ra < rb ? -1 : 1 }
    switch (a, b) {
    case (.number(let x)?, .number(let y)?):
      let (p, q) = (Decimal(string: x)!, Decimal(string: y)!)
      return p == q ? 0 : (p < q ? -1 : 1)
    case (.string(let x)?, .string(let y)?):
      let (p, q) = (Array(x.utf16), Array(y.utf16))
      return p == q ? 0 : (p.lexicographicallyPrecedes(q) ? -1 : 1)
    default: return 0
    }
  }

  static func comparePK(_ a: String, _ b: String) -> Int {
    func int32(_ s: String) -> Int? {
      guard s.range(of: "^-?[0-9]+$", options: .regularExpression) != nil,
        let value = Decimal(string: s), value >= -2_147_483_648, value <= 2_147_483_647
      else { return nil }
      return NSDecimalNumber(decimal: value).intValue
    }
    switch (int32(a), int32(b)) {
    case (let x?, let y?):
      if x != y { return x < y ? -1 : 1 }
      if a.utf16.count != b.utf16.count { return a.utf16.count < b.utf16.count ? -1 : 1 }
    case (.some, nil): return -1
    case (nil, .some): return 1
    default: break
    }
    let (p, q) = (Array(a.utf16), Array(b.utf16))
    return p == q ? 0 : (p.lexicographicallyPrecedes(q) ? -1 : 1)
  }

  /// All documents sorted by (value at `sortValue`, pk).
  static func sorted(_ docs: [String: JSONObject], by sortValue: (String, JSONObject) -> JSONValue?)
    -> [String]
  {
    docs.keys.sorted { a, b in
      let c = compare(sortValue(a, docs[a]!), sortValue(b, docs[b]!))
      return c != 0 ? c < 0 : comparePK(a, b) < 0
    }
  }
}

/// Random values and pks for the randomized query tests.
struct QueryFuzz {
  var rng: SeededGenerator

  mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
  mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }

  /// Strings for `contains`: substrings of one another, in several scripts.
  static let words = ["", "a", "ab", "bab", "abc", "café", "cafe\u{301}", "é", "😀x", "x😀", "～a", "A"]

  static let strings = ["", "a", "B", "b", "é", "e\u{301}", "😀", "～", "\u{E000}", "aa", "10", "-"]

  mutating func scalar() -> JSONValue {
    switch int(0...9) {
    case 0: return .null
    case 1: return .bool(chance(0.5))
    case 2, 3: return .integer(int(-5...5))
    case 4: return .number(["1.5", "-0.25", "1e1", "10.0", "2E-1", "-0", "0.2"][int(0...6)])
    case 5:
      return .number(
        ["123456789012345678901234567", "123456789012345678901234568", "-99999999999999999999"][int(0...2)])
    default: return .string(Self.strings[int(0...Self.strings.count - 1)])
    }
  }

  mutating func value() -> JSONValue? {
    switch int(0...11) {
    case 0: return nil
    case 1: return .array([scalar()])
    case 2: return .object(["k": scalar()])
    default: return scalar()
    }
  }

  mutating func pk() -> String {
    switch int(0...5) {
    case 0: return String(int(-20...20))
    case 1: return "0" + String(int(0...20))
    case 2:
      return ["2147483647", "2147483648", "-2147483648", "-2147483649", "é", "😀", "～", "a b"][int(0...7)]
    default:
      return String(
        (0..<int(1...3)).map { _ in "abcXYZ09_"[String.Index(utf16Offset: int(0...8), in: "abcXYZ09_")] })
    }
  }

  /// A table of `count` documents where up to half share one value of `v`.
  mutating func table(count: Int) -> [String: JSONObject] {
    var docs: [String: JSONObject] = [:]
    let shared = scalar()
    let sharedShare = Double(int(0...50)) / 100
    var attempts = 0
    while docs.count < count && attempts < count * 20 {
      attempts += 1
      let pk = pk()
      if docs[pk] != nil || docs.keys.contains(where: { $0.utf8.elementsEqual(pk.utf8) }) { continue }
      var doc: JSONObject = ["id": .string(pk)]
      let v: JSONValue? = chance(sharedShare) ? shared : value()
      if let v {
        doc["v"] = v
        doc["w"] = v
      }
      doc["n"] = .integer(int(0...9))
      if chance(0.7) {
        doc["tags"] = .array(
          (0..<int(0...2)).map { _ in chance(0.8) ? .string(["x", "y", "z"][int(0...2)]) : scalar() })
      }
      // A nested object: `o.a.b` (an order key, shared like `v`), `o.c`,
      // and sometimes an `o.a` that is no object, so `o.a.b` is missing.
      if chance(0.85) {
        var o: JSONObject = [:]
        switch int(0...4) {
        case 0: o["a"] = scalar()
        case 1: break
        default: o["a"] = .object(["b": chance(sharedShare) ? shared : scalar()])
        }
        if chance(0.6) {
          o["c"] = chance(0.8) ? .string(Self.words[int(0...Self.words.count - 1)]) : scalar()
        }
        doc["o"] = .object(o)
      }
      if chance(0.8) {
        doc["s"] = chance(0.85) ? .string(Self.words[int(0...Self.words.count - 1)]) : scalar()
      }
      docs[pk] = doc
    }
    return docs
  }
}

/// The store holding a fuzz table, for the randomized tests.
/// A store whose table `t` holds `docs`, with order keys `v`, `n` and
/// `o.a.b`, and the secondary indexes `indexes`.
func makeFuzzStore(_ docs: [String: JSONObject], indexes: [String] = []) throws -> (Store, Scratch) {
  let secondary = indexes.isEmpty ? "" : "    indexes: [\(indexes.joined(separator: ", "))]\n"
  let (store, scratch) = try makeStore(
    yaml: "version: 1\ntables:\n  t:\n    path: t\n    order: [v, n, o.a.b]\n" + secondary)
  try store.write { tx in
    for (pk, doc) in docs { _ = try tx.put(table: "t", pk: pk, document: .object(doc)) }
  }
  return (store, scratch)
}
