import Folio
import FolioCore
import FolioJSON
import FolioTestSupport
import Testing

@testable import FolioSystem

@Suite struct SourceTextTests {
  @Test func excerptPutsTheCaretUnderTheOffendingByte() {
    let text = Array("{\n  \"views\": 1O\n}".utf8)
    let offset = text.firstIndex(of: UInt8(ascii: "O"))!
    let excerpt = text.withUnsafeBytes { SourceText.excerpt(around: offset, in: $0) }
    #expect(excerpt == "  \"views\": 1O\n            ^")
  }

  @Test func excerptByLineAndColumnCountsScalarsAndKeepsTabs() {
    let text = Array("a: 1\r\n\té😀: [\n".utf8)
    let excerpt = text.withUnsafeBytes { SourceText.excerpt(line: 2, column: 4, in: $0) }
    #expect(excerpt == "\té😀: [\n\t  ^")
    #expect(text.withUnsafeBytes { SourceText.excerpt(line: 9, column: 1, in: $0) } == nil)
  }

  @Test func longLinesAreCutToAWindowAroundTheColumn() {
    let line = String(repeating: "a", count: 5000) + "X" + String(repeating: "b", count: 5000)
    let bytes = Array(line.utf8)
    let excerpt = bytes.withUnsafeBytes { SourceText.excerpt(around: 5000, in: $0) }
    let rows = excerpt.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(rows.count == 2)
    #expect(rows[0].hasPrefix("…") && rows[0].hasSuffix("…"))
    #expect(rows[0].count <= SourceText.excerptWidth + 2)
    let caret = rows[1].count - 1
    #expect(Array(rows[0])[caret] == "X")
  }

  @Test func controlCharactersPrintAsSpacesSoTheCaretStaysAligned() {
    let bytes: [UInt8] = [0x61, 0x01, 0x62, 0x7F, 0x63]
    let excerpt = bytes.withUnsafeBytes { SourceText.excerpt(around: 4, in: $0) }
    #expect(excerpt == "a b c\n    ^")
  }

  @Test func parseErrorsCarryTheirExcerpt() throws {
    let bytes = Array("{\"a\": 1,\n \"b\" 2}".utf8)
    let error = try #require(throws: FolioError.self) { try JSONValue(parsing: bytes, file: "x.json") }
    #expect(error.location == .init(file: "x.json", line: 2, column: 6))
    #expect(error.excerpt == " \"b\" 2}\n     ^")
  }

  @Test func configErrorsCarryTheirExcerpt() throws {
    let yaml = Array("version: 1\ntables:\n  todos:\n    key: id\n    colour: red\n".utf8)
    let error = try #require(throws: FolioError.self) { try Config(bytes: yaml, file: "folio.yaml") }
    let location = try #require(error.location)
    let excerpt = try #require(error.excerpt)
    #expect(location.line == 5)
    #expect(excerpt.hasPrefix("    colour: red\n"))
    #expect(excerpt.hasSuffix(String(repeating: " ", count: location.column - 1) + "^"))
  }
}
