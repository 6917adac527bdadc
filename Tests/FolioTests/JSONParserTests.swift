import Folio
import FolioSystem
import FolioTestSupport
import Testing

@testable import FolioJSON

/// A text the parser must accept, and its canonical form.
struct ValidJSONCase: Sendable, CustomTestStringConvertible {
  let input: [UInt8]
  let canonical: String
  init(_ input: String, _ canonical: String) {
    self.input = Array(input.utf8)
    self.canonical = canonical
  }
  var testDescription: String { String(decoding: input, as: UTF8.self).debugDescription }
}

/// A text the parser must reject, where, and with what words.
struct InvalidJSONCase: Sendable, CustomTestStringConvertible {
  let input: [UInt8]
  let line: Int
  let column: Int
  let message: String
  init(_ input: String, _ line: Int, _ column: Int, _ message: String) {
    self.init(Array(input.utf8), line, column, message)
  }
  init(_ input: [UInt8], _ line: Int, _ column: Int, _ message: String) {
    self.input = input
    self.line = line
    self.column = column
    self.message = message
  }
  var testDescription: String { String(decoding: input, as: UTF8.self).debugDescription }
}

/// Parses `input` expecting an error, and returns it.
func expectJSONError(
  _ input: [UInt8], file: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
) -> FolioError? {
  do {
    let value = try JSONValue(parsing: input, file: file)
    Issue.record("parsed as \(value.compactString)", sourceLocation: sourceLocation)
    return nil
  } catch let error as FolioError {
    return error
  } catch {
    Issue.record("not a FolioError: \(error)", sourceLocation: sourceLocation)
    return nil
  }
}

@Suite struct JSONParserTests {
  static let validCases: [ValidJSONCase] = [
    // Scalars, with whitespace around them.
    .init("null", "null\n"),
    .init(" \t\r\n true \n", "true\n"),
    .init("false", "false\n"),
    // Numbers keep their literal text, however big or precise.
    .init("0", "0\n"),
    .init("-0", "-0\n"),
    .init("1.50e+3", "1.50e+3\n"),
    .init("1E400", "1E400\n"),
    .init("-1.0e-10", "-1.0e-10\n"),
    .init("0.0", "0.0\n"),
    .init("-0.0E+00", "-0.0E+00\n"),
    .init(
      "123456789012345678901234567890.123456789e-999999",
      "123456789012345678901234567890.123456789e-999999\n"),
    .init(
      "[9007199254740993, -9223372036854775809]",
      "[\n  9007199254740993,\n  -9223372036854775809\n]\n"),
    // Strings and escapes.
    .init(#""""#, "\"\"\n"),
    .init(#""\"\\\/\b\f\n\r\t""#, #""\"\\/\b\f\n\r\t""# + "\n"),
    .init(#""\u0041\u00e9\u00E9\u20ac\uD83D\uDE00\ud83d\ude00""#, "\"Aéé€😀😀\"\n"),
    .init(#""\u0000\u0001\u001F\u007F\u0080""#, #""\u0000\u0001\u001f"# + "\u{7F}\u{80}\"\n"),
    .init(#""\u2028\u2029""#, "\"\u{2028}\u{2029}\"\n"),
    .init("\"héllo wörld 😀 \u{7F}\"", "\"héllo wörld 😀 \u{7F}\"\n"),
    .init(#""\uDBFF\uDFFF\uFFFF""#, "\"\u{10FFFF}\u{FFFF}\"\n"),
    .init(
      #""a long string with an escape at the end\n""#,
      #""a long string with an escape at the end\n""# + "\n"),
    .init(#""\\\\\\\\\\\\\\\\""#, #""\\\\\\\\\\\\\\\\""# + "\n"),
    // Containers.
    .init("[]", "[]\n"),
    .init("{}", "{}\n"),
    .init("[ ]", "[]\n"),
    .init("{ \n }", "{}\n"),
    .init("[1,2,3]", "[\n  1,\n  2,\n  3\n]\n"),
    .init("[[[[]]]]", "[\n  [\n    [\n      []\n    ]\n  ]\n]\n"),
    .init(
      #"{"b":1,"a":[true,{"d":null,"c":[]}],"e":{}}"#,
      """
      {
        "a": [
          true,
          {
            "c": [],
            "d": null
          }
        ],
        "b": 1,
        "e": {}
      }

      """),
    .init(#"{"":1,"a":""}"#, "{\n  \"\": 1,\n  \"a\": \"\"\n}\n"),
    .init(#"{"a\"b":1,"\u0007":2}"#, "{\n  \"\\u0007\": 2,\n  \"a\\\"b\": 1\n}\n"),
    // Keys sort by code point (UTF-8 bytes): Z < a < e+U+0301 < z < é <
    // U+FFFF < 😀. UTF-16 order would put 😀 before U+FFFF, and Swift's
    // String `<` would call the two spellings of é equal.
    .init(
      #"{"z":1,"é":2,"Z":3,"😀":4,"\uFFFF":5,"a":6,"e\u0301":7}"#,
      "{\n  \"Z\": 3,\n  \"a\": 6,\n  \"e\u{301}\": 7,\n  \"z\": 1,\n  \"é\": 2,\n  \"\u{FFFF}\": 5,\n  \"😀\": 4\n}\n"
    ),
    // Two spellings of é are two keys, not a duplicate.
    .init(#"{"\u00e9":1,"e\u0301":2}"#, "{\n  \"e\u{301}\": 2,\n  \"é\": 1\n}\n"),
    // Whitespace of every kind between tokens.
    .init("\t{\r\n\"a\"\t:\n[ 1 ,\r2 ] }  ", "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n"),
  ]

  @Test(arguments: validCases)
  func acceptsValidText(_ testCase: ValidJSONCase) throws {
    let value = try JSONValue(parsing: testCase.input)
    #expect(value.canonicalString == testCase.canonical)
    // The canonical form is itself valid, and a fixed point.
    let again = try JSONValue(parsing: value.canonicalBytes())
    #expect(again == value)
    #expect(again.canonicalBytes() == value.canonicalBytes())
  }

  static let invalidCases: [InvalidJSONCase] = [
    // Nothing there.
    .init("", 1, 1, "empty input, expected a JSON value"),
    .init("   ", 1, 4, "empty input"),
    .init("\n\n", 3, 1, "empty input"),
    // Trailing and missing commas.
    .init("[1,]", 1, 3, "trailing comma is not allowed before ']'"),
    .init("[1,\n]", 1, 3, "trailing comma is not allowed before ']'"),
    .init(#"{"a":1,}"#, 1, 7, "trailing comma is not allowed before '}'"),
    .init("[,1]", 1, 2, "expected a JSON value, found ','"),
    .init("[1,,2]", 1, 4, "expected a JSON value, found ','"),
    .init("{,}", 1, 2, "expected an object key or '}', found ','"),
    .init("[1 2]", 1, 4, "expected ',' or ']' after array element, found '2'"),
    .init(#"{"a":1 "b":2}"#, 1, 8, "expected ',' or '}' after object member, found '\"'"),
    // Comments.
    .init("// c\n1", 1, 1, "comments are not allowed in JSON"),
    .init("/* c */ 1", 1, 1, "comments are not allowed in JSON"),
    .init("[1 /* x */]", 1, 4, "comments are not allowed in JSON"),
    .init("1 // x", 1, 3, "comments are not allowed in JSON"),
    .init("{\"a\":1 // x\n}", 1, 8, "comments are not allowed in JSON"),
    // Escapes.
    .init(#""\q""#, 1, 2, #"invalid escape '\q' in string"#),
    .init(#""abc\x41""#, 1, 5, #"invalid escape '\x' in string"#),
    .init(#""\U0041""#, 1, 2, #"invalid escape '\U' in string"#),
    .init(#""\'""#, 1, 2, #"invalid escape '\'' in string"#),
    .init(#""\u12""#, 1, 2, "expected 4 hex digits"),
    .init(#""\u12G4""#, 1, 2, "expected 4 hex digits"),
    .init(#""\u"#, 1, 2, "expected 4 hex digits"),
    .init(#""\"#, 1, 1, "unterminated string"),
    // Surrogates in escapes.
    .init(#""\uD800""#, 1, 2, #"lone surrogate \uD800 in string"#),
    .init(#""\uDBFF\u0041""#, 1, 2, #"lone surrogate \uDBFF in string"#),
    .init(#""\uD800\uD800""#, 1, 2, #"lone surrogate \uD800 in string"#),
    .init(#""\uDC00""#, 1, 2, #"lone surrogate \uDC00 in string"#),
    .init(#""\udfff""#, 1, 2, #"lone surrogate \uDFFF in string"#),
    .init(#""a\uD83Dx""#, 1, 3, #"lone surrogate \uD83D in string"#),
    .init(#""\uD83D\n""#, 1, 2, #"lone surrogate \uD83D in string"#),
    // Numbers.
    .init("01", 1, 1, "leading zeros are not allowed in numbers"),
    .init("-01", 1, 1, "leading zeros are not allowed in numbers"),
    .init("[00]", 1, 2, "leading zeros are not allowed in numbers"),
    .init("NaN", 1, 1, "NaN is not allowed in JSON"),
    .init("[NaN]", 1, 2, "NaN is not allowed in JSON"),
    .init("Infinity", 1, 1, "Infinity is not allowed in JSON"),
    .init("-Infinity", 1, 1, "-Infinity is not allowed in JSON"),
    .init("-", 1, 2, "expected a digit after '-', found end of input"),
    .init("-a", 1, 2, "expected a digit after '-', found 'a'"),
    .init("1.", 1, 3, "expected a digit after the decimal point"),
    .init("1.e5", 1, 3, "expected a digit after the decimal point"),
    .init(".5", 1, 1, "expected a JSON value, found '.'"),
    .init("+1", 1, 1, "expected a JSON value, found '+'"),
    .init("1e", 1, 3, "expected a digit in the exponent"),
    .init("1e+", 1, 4, "expected a digit in the exponent"),
    .init("1E-x", 1, 4, "expected a digit in the exponent"),
    .init("0x10", 1, 2, "unexpected data after JSON value"),
    // Data after the value.
    .init("1 2", 1, 3, "unexpected data after JSON value"),
    .init("{} {}", 1, 4, "unexpected data after JSON value"),
    .init("truex", 1, 5, "unexpected data after JSON value"),
    .init("[truex]", 1, 6, "expected ',' or ']' after array element, found 'x'"),
    // Control characters in strings.
    .init("\"a\nb\"", 1, 3, "unescaped control character U+000A in string"),
    .init("\"a\tb\"", 1, 3, "unescaped control character U+0009 in string"),
    .init("\"\u{0}\"", 1, 2, "unescaped control character U+0000 in string"),
    .init("\"abcdefghij\u{1}klm\"", 1, 12, "unescaped control character U+0001 in string"),
    .init("\"\\n\u{1F}\"", 1, 4, "unescaped control character U+001F in string"),
    // Duplicate keys, compared after unescaping.
    .init(#"{"a":1,"a":2}"#, 1, 8, "duplicate key 'a' in object"),
    .init(#"{"a":1,"b":{"a":2},"b":3}"#, 1, 20, "duplicate key 'b' in object"),
    .init(#"{"a":1,"\u0061":2}"#, 1, 8, "duplicate key 'a' in object"),
    .init(#"{"\n":1,"\u000a":2}"#, 1, 9, "duplicate key 'U+000A' in object"),
    // Object and array structure.
    .init(#"{"a" 1}"#, 1, 6, "expected ':' after object key, found '1'"),
    .init(#"{"a""#, 1, 5, "expected ':' after object key, found end of input"),
    .init(#"{"a":"#, 1, 6, "expected a JSON value, found end of input"),
    .init("{1:2}", 1, 2, "expected an object key or '}', found '1'"),
    .init("{a:1}", 1, 2, "expected an object key or '}', found 'a'"),
    .init(#"{"a":1,b:2}"#, 1, 8, "expected an object key after ',', found 'b'"),
    .init("[", 1, 2, "expected a JSON value, found end of input"),
    .init("{", 1, 2, "expected an object key or '}', found end of input"),
    .init(#"{"a":1"#, 1, 7, "expected ',' or '}' after object member, found end of input"),
    .init("[1", 1, 3, "expected ',' or ']' after array element, found end of input"),
    .init("]", 1, 1, "expected a JSON value, found ']'"),
    .init("[1}", 1, 3, "expected ',' or ']' after array element, found '}'"),
    .init(#""abc"#, 1, 1, "unterminated string"),
    .init(#"["abcdefghijklmnopq"#, 1, 2, "unterminated string"),
    // Words that are not JSON.
    .init("tru", 1, 1, "invalid literal, expected 'true'"),
    .init("nul", 1, 1, "invalid literal, expected 'null'"),
    .init("fals", 1, 1, "invalid literal, expected 'false'"),
    .init("trUe", 1, 1, "invalid literal, expected 'true'"),
    .init("True", 1, 1, "expected a JSON value, found 'True'"),
    .init("undefined", 1, 1, "expected a JSON value, found 'undefined'"),
    .init("'a'", 1, 1, "JSON strings use double quotes"),
    // Byte order marks.
    .init([0xEF, 0xBB, 0xBF, 0x7B, 0x7D], 1, 1, "byte order mark (U+FEFF) is not allowed in JSON"),
    .init([0x5B, 0xEF, 0xBB, 0xBF, 0x31, 0x5D], 1, 2, "byte order mark (U+FEFF) is not allowed"),
    // Positions: lines, CRLF, lone CR, and columns in Unicode scalars.
    .init("{\n  \"a\": 1,\n  \"b\" 2\n}", 3, 7, "expected ':' after object key"),
    .init(#"{"é😀": 1 2}"#, 1, 10, "expected ',' or '}' after object member"),
    .init("[\r\n1\r\n2]", 3, 1, "expected ',' or ']' after array element"),
    .init("[\r1\r2]", 3, 1, "expected ',' or ']' after array element"),
    .init("\t\tx", 1, 3, "expected a JSON value, found 'x'"),
    .init("[\"é\",\n \"😀\", x]", 2, 7, "expected a JSON value, found 'x'"),
    // Non-ASCII outside strings.
    .init("[é]", 1, 2, "expected a JSON value, found 'é'"),
    .init("\u{A0}1", 1, 1, "expected a JSON value, found '\u{A0}'"),
  ]

  static let invalidUTF8Cases: [InvalidJSONCase] = [
    .init([0x22, 0xC0, 0x80, 0x22], 1, 2, "invalid UTF-8 byte 0xC0 (overlong encoding)"),
    .init([0x22, 0xC1, 0xBF, 0x22], 1, 2, "invalid UTF-8 byte 0xC1 (overlong encoding)"),
    .init([0x22, 0xE0, 0x80, 0x80, 0x22], 1, 2, "invalid UTF-8 byte 0xE0 (overlong encoding)"),
    .init([0x22, 0xE0, 0x9F, 0xBF, 0x22], 1, 2, "invalid UTF-8 byte 0xE0 (overlong encoding)"),
    .init(
      [0x22, 0xF0, 0x80, 0x80, 0x80, 0x22], 1, 2, "invalid UTF-8 byte 0xF0 (overlong encoding)"),
    .init(
      [0x22, 0xF0, 0x8F, 0xBF, 0xBF, 0x22], 1, 2, "invalid UTF-8 byte 0xF0 (overlong encoding)"),
    .init(
      [0x22, 0xED, 0xA0, 0x80, 0x22], 1, 2, "invalid UTF-8 byte 0xED (encodes a UTF-16 surrogate)"),
    .init(
      [0x22, 0xED, 0xBF, 0xBF, 0x22], 1, 2, "invalid UTF-8 byte 0xED (encodes a UTF-16 surrogate)"),
    .init(
      [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 1, 2,
      "invalid UTF-8 byte 0xF4 (encodes a code point above U+10FFFF)"),
    .init(
      [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], 1, 2,
      "invalid UTF-8 byte 0xF5 (encodes a code point above U+10FFFF)"),
    .init([0x22, 0xF7, 0xBF, 0xBF, 0xBF, 0x22], 1, 2, "invalid UTF-8 byte 0xF7"),
    .init(
      [0x22, 0xF8, 0x88, 0x80, 0x80, 0x80, 0x22], 1, 2,
      "invalid UTF-8 byte 0xF8 (never used in UTF-8)"),
    .init([0x22, 0xFE, 0x22], 1, 2, "invalid UTF-8 byte 0xFE"),
    .init([0x22, 0xFF, 0x22], 1, 2, "invalid UTF-8 byte 0xFF"),
    .init(
      [0x22, 0x80, 0x22], 1, 2, "invalid UTF-8 byte 0x80 (continuation byte without a lead byte)"),
    .init([0x22, 0xBF, 0x22], 1, 2, "invalid UTF-8 byte 0xBF (continuation byte"),
    .init([0x22, 0xC3, 0x22], 1, 2, "invalid UTF-8 byte 0xC3 (truncated sequence)"),
    .init([0x22, 0xE2, 0x82, 0x22], 1, 2, "invalid UTF-8 byte 0xE2 (truncated sequence)"),
    .init([0x22, 0xF0, 0x9F, 0x98, 0x22], 1, 2, "invalid UTF-8 byte 0xF0 (truncated sequence)"),
    .init([0x22, 0xE2, 0x82], 1, 2, "invalid UTF-8 byte 0xE2 (truncated sequence)"),
    .init([0x22, 0xC3], 1, 2, "invalid UTF-8 byte 0xC3 (truncated sequence)"),
    .init([0x22, 0xC3, 0x41, 0x22], 1, 2, "invalid UTF-8 byte 0xC3 (truncated sequence)"),
    // After valid multi-byte text, inside the 8-byte fast scan, after an
    // escape (the slow path), in a key, and outside any string.
    .init(Array("\"é".utf8) + [0xFF, 0x22], 1, 3, "invalid UTF-8 byte 0xFF"),
    .init(
      Array("\"abcdefghij".utf8) + [0xFF] + Array("klmnop\"".utf8), 1, 12, "invalid UTF-8 byte 0xFF"
    ),
    .init(Array(#""\n"#.utf8) + [0xC0, 0x80, 0x22], 1, 4, "invalid UTF-8 byte 0xC0"),
    .init([0x7B, 0x22, 0xC0, 0xAF, 0x22, 0x3A, 0x31, 0x7D], 1, 3, "invalid UTF-8 byte 0xC0"),
    .init([0xFF], 1, 1, "invalid UTF-8 byte 0xFF"),
    .init([0x5B, 0x31, 0x2C, 0x80, 0x5D], 1, 4, "invalid UTF-8 byte 0x80"),
  ]

  @Test(arguments: invalidCases + invalidUTF8Cases)
  func rejectsInvalidText(_ testCase: InvalidJSONCase) throws {
    let error = try #require(expectJSONError(testCase.input))
    #expect(error.code == .invalidJSON)
    #expect(error.message.contains(testCase.message), "message: \(error.message)")
    let location = try #require(error.location)
    #expect(location.file == "<input>")
    #expect(
      (location.line, location.column) == (testCase.line, testCase.column),
      "at \(location.line):\(location.column): \(error.message)")
  }

  // MARK: Nesting

  @Test func acceptsNestingOf512Levels() throws {
    let arrays = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
    var value = try JSONValue(parsing: arrays)
    var depth = 0
    while case .array(let elements) = value, let first = elements.first {
      value = first
      depth += 1
    }
    #expect(depth == 511)  // the innermost array is empty
    let objects =
      String(repeating: #"{"a":"#, count: 512) + "1" + String(repeating: "}", count: 512)
    #expect(throws: Never.self) { try JSONValue(parsing: objects) }
  }

  @Test func rejectsNestingOf513Levels() throws {
    let texts = [
      String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
      String(repeating: #"{"a":"#, count: 513) + "1" + String(repeating: "}", count: 513),
      String(repeating: "[", count: 512) + "{}" + String(repeating: "]", count: 512),
    ]
    for (text, column) in zip(texts, [513, 5 * 512 + 1, 513]) {
      let error = try #require(expectJSONError(Array(text.utf8)))
      #expect(error.message == "nesting is deeper than 512 levels")
      #expect(error.location?.column == column)
    }
  }

  @Test func rejectsHostileNestingWithoutOverflowingTheStack() throws {
    for text in [
      String(repeating: "[", count: 100_000), String(repeating: "[{\"a\":", count: 100_000),
    ] {
      let error = try #require(expectJSONError(Array(text.utf8)))
      #expect(error.message == "nesting is deeper than 512 levels")
      #expect(error.location?.line == 1)
    }
  }

  @Test func honoursAnotherDepthLimit() throws {
    var parser = JSONParser(maxDepth: 2)
    #expect(throws: Never.self) { try parser.parse(Array("[[1]]".utf8)) }
    #expect(throws: FolioError.self) { try parser.parse(Array("[[[1]]]".utf8)) }
  }

  // MARK: Values

  @Test func keepsNumberLiteralsExactly() throws {
    let value = try JSONValue(parsing: "[1.50e+3, -0, 1E400, 100000000000000000000000000001]")
    #expect(
      value.arrayValue?.map(\.numberText) == [
        "1.50e+3", "-0", "1E400", "100000000000000000000000000001",
      ])
  }

  @Test func decodesEscapesAndSurrogatePairs() throws {
    let value = try JSONValue(parsing: #""\u0000a\"b\\c\/d\b\f\n\r\t\uD83D\uDE00\u00e9""#)
    let expected = "\u{0}a\"b\\c/d\u{8}\u{C}\n\r\t😀é"
    #expect(value.stringValue.map { Array($0.unicodeScalars) } == Array(expected.unicodeScalars))
  }

  @Test func keepsPrecomposedAndDecomposedKeysApart() throws {
    let value = try JSONValue(parsing: #"{"\u00e9": 1, "e\u0301": 2}"#)
    let object = try #require(value.objectValue)
    #expect(object.count == 2)
    #expect(object["\u{E9}"] == 1)
    #expect(object["e\u{301}"] == 2)
  }

  @Test func keepsMemberOrderAsRead() throws {
    let value = try JSONValue(parsing: #"{"b": 1, "a": 2, "c": 3}"#)
    #expect(value.objectValue?.keys == ["b", "a", "c"])
  }

  @Test func findsDuplicatesInLargeObjects() throws {
    // Past the size where the parser switches to a hash set.
    let members = (0..<100).map { #""k\#($0)": \#($0)"# }
    let value = try JSONValue(parsing: "{" + members.joined(separator: ",") + "}")
    #expect(value.objectValue?.count == 100)
    #expect(value["k99"] == 99)

    for duplicate in [3, 30, 99] {
      let text = "{" + members.joined(separator: ",") + #", "k\#(duplicate)": 0}"#
      let error = try #require(expectJSONError(Array(text.utf8)))
      #expect(error.message == "duplicate key 'k\(duplicate)' in object")
    }
    // A duplicate within the first members, found by the linear check,
    // after the object has grown.
    let text = "{" + members.prefix(30).joined(separator: ",") + #", "\u006b5": 0}"#
    #expect(expectJSONError(Array(text.utf8))?.message == "duplicate key 'k5' in object")
  }

  @Test func allowsTheSameKeyInDifferentObjects() throws {
    let value = try JSONValue(parsing: #"[{"a":1},{"a":2,"b":{"a":3}}]"#)
    #expect(value.arrayValue?.count == 2)
  }

  /// Keys of every length around the parser's word and cache boundaries,
  /// some differing only in bytes its key cache does not hash.
  static let awkwardKeys: [String] = {
    var keys = ["", "a", "é", "e\u{301}", "😀"]
    for length in [7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 64, 65, 100] {
      keys.append(String(repeating: "k", count: length))
    }
    // Same length, first 32 and last 8 bytes: only the middle differs.
    let head = String(repeating: "h", count: 32)
    let tail = String(repeating: "t", count: 8)
    keys += [head + "AAAA" + tail, head + "BBBB" + tail, head + "AAAAé" + tail]
    keys += [String(repeating: "x", count: 20) + "é", "0123456789abcdefé"]
    return keys
  }()

  @Test func keepsKeysExactWhenReadAgain() throws {
    var parser = JSONParser()
    let members = Self.awkwardKeys.enumerated().map { "\(JSONValue.string($1).compactString): \($0)" }
    let text = Array(("{" + members.joined(separator: ", ") + "}").utf8)
    // The second read finds the keys in the cache.
    for _ in 0..<2 {
      let value = try parser.parse(text)
      let object = try #require(value.objectValue)
      #expect(object.count == Self.awkwardKeys.count)
      for (n, (key, member)) in zip(Self.awkwardKeys, object).enumerated() {
        #expect(Array(member.key.unicodeScalars) == Array(key.unicodeScalars))
        #expect(member.value == .integer(n))
      }
    }
    // Alone, each key ends too near the end of the input for the parser
    // to read it in whole words.
    for _ in 0..<2 {
      for key in Self.awkwardKeys {
        let value = try parser.parse(Array("{\(JSONValue.string(key).compactString):1}".utf8))
        let member = try #require(value.objectValue?.members.first)
        #expect(Array(member.key.unicodeScalars) == Array(key.unicodeScalars))
      }
    }
    // A key at the very end of the input, with no room for a whole word.
    for key in Self.awkwardKeys {
      let bytes = Array(#"{"\#(key)""#.utf8)
      let error = try #require(expectJSONError(bytes))
      #expect(error.message == "expected ':' after object key, found end of input")
    }
  }

  @Test func findsDuplicatesOfEveryKindOfKey() throws {
    for key in Self.awkwardKeys {
      let quoted = JSONValue.string(key).compactString
      // The same key escaped: the parser decodes it on its slow path.
      let escaped =
        "\"" + key.unicodeScalars.map { "\\u" + JSONParser.hex($0.value) }.joined() + "\""
      for second in [quoted, key.unicodeScalars.allSatisfy({ $0.value < 0x10000 }) ? escaped : quoted] {
        let text = "{\(quoted): 1, \"other\": 2, \(second): 3}"
        let error = try #require(expectJSONError(Array(text.utf8)), "\(text)")
        #expect(error.message == "duplicate key '\(JSONParser.displayed(key))' in object")
      }
    }
    // Keys that differ only where the fingerprint does not look are still
    // two keys.
    let object =
      "{"
      + Self.awkwardKeys.map { "\(JSONValue.string($0).compactString): 0" }
      .joined(separator: ",") + "}"
    #expect(try JSONValue(parsing: object).objectValue?.count == Self.awkwardKeys.count)
  }

  @Test func keysDifferingFromTheLastDocumentsAreReadAsWritten() throws {
    // The parser expects each key to be the one that followed the previous
    // key last time; these break that expectation in every way.
    var parser = JSONParser()
    let documents: [(String, [String])] = [
      (#"{"a": 1, "ab": 2, "c": {"a": 3, "ab": 4}}"#, ["a", "ab", "c"]),
      (#"{"a": 1, "abc": 2, "c": {"a": 3, "a\u0062": 4}}"#, ["a", "abc", "c"]),
      (#"{"a": 1, "a": 2}"#, []),
      (#"{"a": 1, "ab\"": 2, "c": 3}"#, ["a", "ab\"", "c"]),
      (#"{"a": 1, "ab": 2, "ab": 3}"#, []),
      (#"{"ab": 1, "a": 2, "c": [{"ab": 3}]}"#, ["ab", "a", "c"]),
      (#"{"a": 1, "ab": 2, "c": 3}"#, ["a", "ab", "c"]),
      (#"{"a": 1, "a"#, []),
    ]
    for _ in 0..<2 {
      for (text, keys) in documents {
        if keys.isEmpty {
          #expect(throws: FolioError.self, "\(text)") { try parser.parse(Array(text.utf8)) }
        } else {
          let value = try parser.parse(Array(text.utf8))
          #expect(value.objectValue?.keys == keys, "\(text)")
        }
      }
    }
  }

  @Test func parserCopiesWorkApart() throws {
    var first = JSONParser()
    _ = try first.parse(Array(#"{"a": [1, 2]}"#.utf8))
    var second = first
    // Deep and wide values make the stacks grow, and move, in each copy.
    let deep = Array((String(repeating: "[", count: 200) + String(repeating: "]", count: 200)).utf8)
    let wide = Array(("[" + (0..<1000).map { #"{"n": \#($0)}"# }.joined(separator: ",") + "]").utf8)
    for _ in 0..<2 {
      #expect(try first.parse(deep).compactString.utf8.count == 400)
      #expect(try second.parse(wide).arrayValue?.count == 1000)
      #expect(try first.parse(wide).arrayValue?.last == ["n": 999])
      #expect(try second.parse(deep).compactString.utf8.count == 400)
    }
  }

  @Test func literalSyntaxStillWorks() {
    let value: JSONValue = ["a": 1, "b": [true, nil, "x", 1.5]]
    #expect(value["a"]?.intValue == 1)
    #expect(value.compactString == #"{"a":1,"b":[true,null,"x",1.5]}"#)
  }

  // MARK: Entry points and errors

  @Test func entryPointsAgree() throws {
    let text = #"{"a": [1, "é", null]}"#
    let fromString = try JSONValue(parsing: text)
    let fromBytes = try JSONValue(parsing: Array(text.utf8))
    let fromBuffer = try Array(text.utf8).withUnsafeBytes { try JSONValue(parsing: $0) }
    #expect(fromString == fromBytes)
    #expect(fromBytes == fromBuffer)
    #expect(throws: FolioError.self) {
      try JSONValue(parsing: UnsafeRawBufferPointer(start: nil, count: 0))
    }
  }

  @Test func errorsNameTheFile() throws {
    do {
      _ = try JSONValue(parsing: "{\n  \"a\": 1\n  \"b\": 2\n}", file: "todos/3f2a.json")
      Issue.record("parsed")
    } catch let error as FolioError {
      #expect(error.location == .init(file: "todos/3f2a.json", line: 3, column: 3))
      #expect(
        error.description
          == "todos/3f2a.json:3:3: error: expected ',' or '}' after object member, found '\"'")
    }
  }

  @Test func parserCountsFromAGivenLine() throws {
    var parser = JSONParser(file: "rows.ndjson", firstLine: 42)
    do {
      _ = try parser.parse(Array(#"{"a": tru}"#.utf8))
      Issue.record("parsed")
    } catch {
      #expect(error.location == .init(file: "rows.ndjson", line: 42, column: 7))
    }
    // The parser is still usable after an error.
    #expect(try parser.parse(Array("[1]".utf8)) == [1])
  }

  @Test func parsesValuesAtOffsets() throws {
    let bytes = Array("[1] {\"a\": 2}\n  \"x\" junk".utf8)
    var parser = JSONParser(file: "stream")
    try bytes.withUnsafeBytes { buffer in
      let first = try parser.parseValue(in: buffer, at: 0)
      #expect(first.value == [1])
      #expect(first.end == 3)
      let second = try parser.parseValue(in: buffer, at: first.end)
      #expect(second.value == ["a": 2])
      #expect(second.end == 12)
      let third = try parser.parseValue(in: buffer, at: second.end)
      #expect(third.value == "x")
      #expect(JSONParser.skipWhitespace(in: buffer, from: third.end) == third.end + 1)
      // Positions count from the offset unless an origin is given.
      parser.firstLine = 7
      #expect(throws: FolioError.self) { try parser.parseValue(in: buffer, at: third.end) }
      do {
        _ = try parser.parseValue(in: buffer, at: third.end)
      } catch let error as FolioError {
        #expect(error.location?.line == 7)
        #expect(error.location?.column == 2)
      }
      do {
        _ = try parser.parseValue(in: buffer, at: third.end, origin: 0)
      } catch let error as FolioError {
        #expect(error.location?.line == 8)
        #expect(error.location?.column == 7)
      }
    }
  }

  @Test func reportsLineAndColumnOfAnOffset() {
    let bytes = Array("ab\r\né😀\rx\ny".utf8)
    bytes.withUnsafeBytes { buffer in
      #expect(SourceText.lineAndColumn(of: 0, in: buffer) == (1, 1))
      #expect(SourceText.lineAndColumn(of: 4, in: buffer) == (2, 1))
      #expect(SourceText.lineAndColumn(of: 10, in: buffer) == (2, 3))  // the "\r"
      #expect(SourceText.lineAndColumn(of: 11, in: buffer) == (3, 1))
      #expect(SourceText.lineAndColumn(of: 13, in: buffer) == (4, 1))
      #expect(SourceText.lineAndColumn(of: 2, in: buffer, firstLine: 10, firstColumn: 5) == (10, 7))
    }
  }
}
