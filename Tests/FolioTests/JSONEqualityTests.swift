import Folio
import FolioJSON
import FolioTestSupport
import Testing

@Suite struct JSONEqualityTests {
  static let equalPairs: [(JSONValue, JSONValue)] = [
    (["a": 1, "b": 2], ["b": 2, "a": 1]),
    (
      ["x": ["a": 1, "b": [1, ["c": nil, "d": true]]]],
      ["x": ["b": [1, ["d": true, "c": nil]], "a": 1]]
    ),
    (nil, nil),
    (true, true),
    (.number("1.50e+3"), .number("1.50e+3")),
    ("é", "\u{E9}"),
    ([], []),
    ([:], [:]),
  ]

  static let unequalPairs: [(JSONValue, JSONValue)] = [
    (1, .number("1.0")),
    (1, .number("1e0")),
    (.number("0"), .number("-0")),
    (1, "1"),
    (nil, false),
    (true, false),
    ("\u{E9}", "e\u{301}"),  // precomposed and decomposed é
    ("a", "a "),
    ([1, 2], [2, 1]),
    ([1], [1, 1]),
    (["a": 1], ["a": 1, "b": 1]),
    (["a": 1], ["b": 1]),
    (["a": 1], ["a": 2]),
    (["\u{E9}": 1], ["e\u{301}": 1]),
    ([], [:]),
    (["ab"], ["a", "b"]),
  ]

  @Test(arguments: equalPairs)
  func equalValuesHashAlike(_ a: JSONValue, _ b: JSONValue) {
    #expect(a == b)
    #expect(b == a)
    #expect(a.hashValue == b.hashValue)
    #expect(a.canonicalBytes() == b.canonicalBytes())
  }

  @Test(arguments: unequalPairs)
  func unequalValuesDiffer(_ a: JSONValue, _ b: JSONValue) {
    #expect(a != b)
    #expect(b != a)
    #expect(a.canonicalBytes() != b.canonicalBytes())
    #expect(Set([a, b]).count == 2)
  }

  @Test func precomposedAndDecomposedStringsAreDifferentJSON() {
    let precomposed = JSONValue.string("\u{E9}")
    let decomposed = JSONValue.string("e\u{301}")
    // Swift's String equality says they are the same…
    #expect("\u{E9}" == "e\u{301}")
    // …but as JSON they are different texts.
    #expect(precomposed != decomposed)
    #expect(Set([precomposed, decomposed]).count == 2)
  }

  @Test func objectsCompareRegardlessOfOrder() {
    let a: JSONObject = ["a": 1, "b": 2]
    let b: JSONObject = ["b": 2, "a": 1]
    #expect(a == b)
    #expect(a.hashValue == b.hashValue)
    #expect(Set([a, b]).count == 1)
    #expect(a != ["a": 1, "b": 3])
  }

  @Test func largeObjectsCompareRegardlessOfOrder() {
    // Large enough to use JSONObject's hash index.
    let pairs = (0..<100).map { ("key\($0)", JSONValue.integer($0)) }
    let a = JSONObject(pairs)
    let b = JSONObject(pairs.reversed())
    #expect(a == b)
    #expect(a.hashValue == b.hashValue)
    var c = b
    c["key50"] = "changed"
    #expect(a != c)
    c["key50"] = 50
    #expect(a == c)
  }

  @Test func objectKeysMatchByExactScalars() {
    var object: JSONObject = ["\u{E9}": 1]
    #expect(object["e\u{301}"] == nil)
    object["e\u{301}"] = 2
    #expect(object.count == 2)
    #expect(object["\u{E9}"] == 1)
    #expect(object.removeValue(forKey: "e\u{301}") == 2)
    #expect(object.keys.map { Array($0.unicodeScalars) } == [["\u{E9}"]])

    // The same with the hash index in use.
    var large = JSONObject((0..<40).map { ("k\($0)", JSONValue.integer($0)) })
    large["\u{E9}"] = 1
    large["e\u{301}"] = 2
    #expect(large.count == 42)
    #expect(large["\u{E9}"] == 1)
    #expect(large["e\u{301}"] == 2)
  }

  @Test func parsedAndBuiltValuesAreEqual() throws {
    let parsed = try JSONValue(parsing: #"{"views": 3, "tags": ["a"], "é": {"x": null}}"#)
    let built: JSONValue = ["\u{E9}": ["x": nil], "tags": ["a"], "views": 3]
    #expect(parsed == built)
    #expect(parsed.hashValue == built.hashValue)
  }
}
