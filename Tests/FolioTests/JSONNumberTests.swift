import Folio
import FolioJSON
import FolioTestSupport
import Testing

@Suite struct JSONNumberTests {
  static let valid = [
    "0", "-0", "1", "-1", "10", "1.5", "0.5", "-0.5", "1e5", "1E+5", "1e-5", "1.50e+3", "0e0",
    "-0.0E-00", "123456789012345678901234567890", "1E400", "9007199254740993",
  ]

  static let invalid = [
    "", "-", "01", "-01", "00", "1.", ".5", "+1", "1e", "1e+", "1E-", "NaN", "Infinity",
    "-Infinity",
    "0x10", "1.5.5", "--1", "1e5.5", "1e5e5", "\u{661}", "1_000", "1,0", "１", "1 ", " 1", "0.",
    "-.5",
    "e5", "true",
  ]

  @Test(arguments: valid)
  func acceptsValidLiterals(_ text: String) throws {
    #expect(JSONValue.isValidNumberLiteral(text))
    // The parser agrees, and keeps the text.
    #expect(try JSONValue(parsing: text) == .number(text))
  }

  @Test(arguments: invalid)
  func rejectsInvalidLiterals(_ text: String) {
    #expect(!JSONValue.isValidNumberLiteral(text))
    // The parser agrees: whatever the text is, it does not read as a
    // number with that literal (" 1" and "true" are valid texts, but not
    // number literals).
    #expect((try? JSONValue(parsing: text))?.numberText != text)
  }

  @Test(arguments: [
    ("0", true), ("-0", true), ("-12", true), ("123456789012345678901234567890", true),
    ("1.0", false), ("1e3", false), ("-1E+2", false), ("0.5", false),
  ])
  func knowsIntegerLiterals(_ text: String, _ isInteger: Bool) {
    #expect(JSONValue.number(text).isIntegerLiteral == isInteger)
  }

  @Test func otherValuesAreNotIntegerLiterals() {
    #expect(!JSONValue.string("1").isIntegerLiteral)
    #expect(!JSONValue.null.isIntegerLiteral)
    #expect(!JSONValue.array([1]).isIntegerLiteral)
    #expect(JSONValue.integer(-42).isIntegerLiteral)
  }
}
