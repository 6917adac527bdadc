import Folio
import FolioTestSupport
import Testing

@testable import FolioJSON

@Suite struct JSONWriterTests {
  static let document: JSONValue = [
    "title": "Ship it",
    "views": .number("1.50e+3"),
    "done": false,
    "tags": ["a", "b"],
    "owner": ["name": "Zoë", "id": nil],
    "empty": [],
    "none": [:],
  ]

  @Test func writesTheCanonicalForm() {
    #expect(
      Self.document.canonicalString == """
        {
          "done": false,
          "empty": [],
          "none": {},
          "owner": {
            "id": null,
            "name": "Zoë"
          },
          "tags": [
            "a",
            "b"
          ],
          "title": "Ship it",
          "views": 1.50e+3
        }

        """)
  }

  @Test func writesTheCompactForm() {
    #expect(
      Self.document.compactString
        == #"{"done":false,"empty":[],"none":{},"owner":{"id":null,"name":"Zoë"},"tags":["a","b"],"title":"Ship it","views":1.50e+3}"#
    )
  }

  @Test(
    arguments: [
      (JSONValue.null, "null"), (true, "true"), (false, "false"), (.number("-0"), "-0"),
      (.number("1E400"), "1E400"), ("", #""""#), ([], "[]"), ([:], "{}"),
    ] as [(JSONValue, String)])
  func writesScalarsAndEmptyContainers(_ value: JSONValue, _ text: String) {
    #expect(value.canonicalString == text + "\n")
    #expect(value.compactString == text)
  }

  @Test func stringAndBytesFormsAgree() {
    #expect(
      Self.document.canonicalString
        == String(decoding: Self.document.canonicalBytes(), as: UTF8.self))
    #expect(
      Self.document.compactString == String(decoding: Self.document.compactBytes(), as: UTF8.self))
  }

  @Test(arguments: 0..<0x20)
  func escapesEveryControlCharacter(_ code: Int) {
    let short: [Int: String] = [
      0x08: #"\b"#, 0x09: #"\t"#, 0x0A: #"\n"#, 0x0C: #"\f"#, 0x0D: #"\r"#,
    ]
    let hex = String(code, radix: 16)
    let expected = short[code] ?? #"\u00"# + (hex.count == 1 ? "0" : "") + hex
    let value = JSONValue.string(String(Unicode.Scalar(UInt8(code))))
    #expect(value.compactString == "\"" + expected + "\"")
  }

  @Test func escapesOnlyQuoteBackslashAndControls() {
    let text = "a\"b\\c/d\u{7F}\u{80}\u{2028}\u{2029}é😀\u{FFFF}"
    #expect(
      JSONValue.string(text).compactString
        == "\"a\\\"b\\\\c/d\u{7F}\u{80}\u{2028}\u{2029}é😀\u{FFFF}\"")
    // Long runs between escapes are copied intact.
    let long = String(repeating: "x", count: 100) + "\n" + String(repeating: "y", count: 100)
    #expect(
      JSONValue.string(long).compactString
        == "\"" + String(repeating: "x", count: 100) + #"\n"# + String(repeating: "y", count: 100)
        + "\"")
  }

  @Test func escapesKeysToo() {
    let value: JSONValue = ["a\"\u{1}": 1]
    #expect(value.compactString == #"{"a\"\u0001":1}"#)
  }

  @Test func sortsKeysByCodePointNotBySwiftStringOrder() throws {
    // UTF-8 byte order is code point order. Swift's String `<` calls the
    // two spellings of é equal; UTF-16 order puts 😀 (D83D) before U+FFFF.
    let keys = ["😀", "\u{FFFF}", "é", "e\u{301}", "z", "a", "Z", "", "aa", "a\u{0}"]
    let object = JSONObject(keys.enumerated().map { ($0.element, JSONValue.integer($0.offset)) })
    #expect(object.count == keys.count)
    let written = JSONValue.object(object).compactString
    let order = ["", "Z", "a", "a\u{0}", "aa", "e\u{301}", "z", "é", "\u{FFFF}", "😀"]
    let reparsed = try #require(try JSONValue(parsing: written).objectValue)
    #expect(
      reparsed.keys.map { Array($0.unicodeScalars) } == order.map { Array($0.unicodeScalars) })
  }

  @Test func sortsLongKeysThatShareAPrefix() throws {
    let keys = [
      "prefix-shared-long-b", "prefix-shared-long-a", "prefix-shared-long", "prefix-shared-lonh",
    ]
    let object = JSONObject(keys.map { ($0, JSONValue.null) })
    let reparsed = try #require(
      try JSONValue(parsing: JSONValue.object(object).compactBytes()).objectValue)
    #expect(
      reparsed.keys == [
        "prefix-shared-long", "prefix-shared-long-a", "prefix-shared-long-b", "prefix-shared-lonh",
      ])
  }

  @Test func indentsNestedContainers() {
    let value: JSONValue = [[[1, [:]], []]]
    #expect(
      value.canonicalString == """
        [
          [
            [
              1,
              {}
            ],
            []
          ]
        ]

        """)
  }

  @Test func appendsSeveralValuesToOneBuffer() {
    var writer = JSONWriter(reservingCapacity: 16)
    for value: JSONValue in [["b": 1, "a": 2], [true]] {
      writer.writeCompact(value)
      writer.bytes.append(0x0A)
    }
    #expect(String(decoding: writer.bytes, as: UTF8.self) == "{\"a\":2,\"b\":1}\n[true]\n")
  }

  /// The compact form taken from canonical bytes is byte for byte the one
  /// the writer makes from the value, spaces, escapes and quotes in
  /// strings included.
  @Test func compactingTheCanonicalFormMatchesTheCompactWriter() {
    let awkward: JSONValue = [
      " a b ": "x y\n \\\" z \\", "q": ["\\", "\"", " ", "", [], [:], [" ": [1, -2.5e+3]]],
      "s\t\n": .string(" \u{0}\u{1F} \u{2028} é "),
    ]
    #expect(JSONWriter.compact(canonical: awkward.canonicalBytes()) == awkward.compactBytes())
    let seed = JSONRandom.seed()
    var generator = JSONRandom(seed: seed)
    for _ in 0..<2000 {
      let value = generator.value()
      let compacted = JSONWriter.compact(canonical: value.canonicalBytes())
      #expect(compacted == value.compactBytes(), "seed \(seed): \(value.compactString)")
      if compacted != value.compactBytes() { return }
    }
  }
}
