import Folio
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioCore
@testable import FolioJSON

/// The schema subset beyond the official suite: where load errors and
/// violations point, the messages people read, column-kind agreement,
/// pointers and inference.
struct JSONSchemaTests {
  static let todos = """
    {
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "type": "object",
      "properties": {
        "id": {"type": "string"},
        "title": {"type": "string", "minLength": 1, "maxLength": 20},
        "views": {"type": "integer", "minimum": 0},
        "status": {"enum": ["open", "done"]},
        "due": {"type": "string", "format": "date-time"},
        "tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}},
        "meta": {"type": "object", "properties": {"k": {"type": "number", "maximum": 9.5}}}
      },
      "required": ["title"],
      "additionalProperties": false,
      "$defs": {"tag": {"type": "string", "pattern": "^[a-z]+$"}}
    }
    """

  func schema(_ text: String = todos, file: String = "schemas/todos.schema.json") throws -> JSONSchema {
    try JSONSchema(bytes: Array(text.utf8), file: file)
  }

  /// The error a document gets, placed in its canonical bytes.
  func error(_ document: JSONValue, _ schema: JSONSchema) throws -> String {
    let violation = try #require(schema.validate(document).first)
    return violation.error(file: "data/todos/a.json", bytes: document.canonicalBytes()).description
  }

  @Test func theIssuesExampleReadsExactly() throws {
    #expect(
      try error(["id": "a", "title": "t", "views": "10"], schema()).hasSuffix(
        ": error: views: expected integer, got string (schema todos.schema.json#/properties/views)"))
    // The issue's line: views is the third line of the canonical form.
    let schema = try JSONSchema(
      bytes: Array(##"{"properties": {"views": {"type": "integer"}}}"##.utf8),
      file: "schemas/todos.schema.json")
    #expect(
      try error(["id": "a", "views": "10"], schema)
        == "data/todos/a.json:3:12: error: views: expected integer, got string (schema todos.schema.json#/properties/views)"
    )
  }

  @Test(arguments: [
    (##"{"title": "", "views": 1}"##, "title: expected at least 1 character, got 0", "#/properties/title"),
    (##"{"title": "t", "views": -1}"##, "views: expected at least 0, got -1", "#/properties/views"),
    (
      ##"{"title": "t", "status": "mid"}"##, ##"status: expected one of "open", "done", got "mid""##,
      "#/properties/status"
    ),
    (
      ##"{"title": "t", "due": "soon"}"##,
      ##"due: expected a date-time such as 2026-12-01T09:30:00Z, got "soon""##, "#/properties/due"
    ),
    (
      ##"{"title": "t", "tags": ["ok", "No"]}"##,
      ##"tags[1]: expected a string matching ^[a-z]+$, got "No""##, "#/$defs/tag"
    ),
    (
      ##"{"title": "t", "meta": {"k": 9.51}}"##, "meta.k: expected at most 9.5, got 9.51",
      "#/properties/meta/properties/k"
    ),
    (##"{"views": 1}"##, "title: required, but missing", "#"),
    (
      ##"{"title": "t", "titel": "x"}"##, "titel: no such property; did you mean 'title'?",
      "#/additionalProperties"
    ),
    (##"[1]"##, "document: expected object, got array", "#"),
  ])
  func violationsSayWhatAndWhere(document: String, message: String, location: String) throws {
    let violations = try schema().validate(try JSONValue(parsing: document))
    #expect(
      violations.first?.description == "\(message) (schema todos.schema.json\(location))", "\(violations)")
  }

  @Test func positionsPointAtTheValueOrTheName() throws {
    let text = "{\n  \"title\": \"t\",\n  \"tags\": [\"ok\",\n    \"No\"],\n  \"titel\": 1\n}\n"
    let bytes = Array(text.utf8)
    let violations = try schema().validate(try JSONValue(parsing: bytes))
    let errors = violations.map { $0.error(file: "a.json", bytes: bytes).location.map(\.description) ?? "" }
    #expect(errors == ["a.json:4:5", "a.json:5:3"])
  }

  @Test func numbersCompareByValueAtAnySize() throws {
    let schema = try schema(##"{"minimum": 18446744073709551616, "enum": [1e20, 18446744073709551617]}"##)
    #expect(schema.accepts(try JSONValue(parsing: "18446744073709551617")))
    #expect(schema.accepts(try JSONValue(parsing: "100000000000000000000.0")))
    #expect(!schema.accepts(try JSONValue(parsing: "18446744073709551615")))
    let integer = try self.schema(##"{"type": "integer"}"##)
    #expect(integer.accepts(try JSONValue(parsing: "1.0")))
    #expect(integer.accepts(try JSONValue(parsing: "1e3")))
    #expect(!integer.accepts(try JSONValue(parsing: "1.5")))
  }

  @Test func choicesQuoteTheClosestOrTheMatches() throws {
    let anyOf = try schema(##"{"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]}"##)
    #expect(
      anyOf.validate(-1).first?.message
        == "matches none of the 2 choices of anyOf; closest: expected at least 0, got -1")
    let oneOf = try schema(##"{"oneOf": [{"type": "number"}, {"type": "integer"}]}"##)
    #expect(oneOf.validate(1).first?.message == "matches 2 choices of oneOf (#0, #1); expected exactly one")
    #expect(oneOf.accepts(1.5))
  }

  @Test(arguments: [
    (##"{"type": "string", "minItems": 1}"##, "1:20", "unsupported keyword 'minItems'"),
    (##"{"properties": {"a": {"type": "text"}}}"##, "1:31", "unknown type \"text\""),
    (##"{"$ref": "#/$defs/missing"}"##, "1:10", "$ref '#/$defs/missing' names no schema in this file"),
    (##"{"$ref": "other.json#/a"}"##, "1:10", "is not supported"),
    (##"{"$ref": "#anchor"}"##, "1:10", "is not supported"),
    (
      ##"{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}"##,
      "", "without reaching a value"
    ),
    (##"{"items": [{"type": "string"}]}"##, "1:11", "'prefixItems') is not supported"),
    (##"{"format": "email"}"##, "1:12", "format 'email' is not supported"),
    (##"{"$schema": "http://json-schema.org/draft-07/schema#"}"##, "1:13", "Folio reads that draft only"),
    (##"{"properties": {"a": {"$id": "x"}}}"##, "1:23", "'$id' inside a schema is not supported"),
    (##"{"pattern": "(unclosed"}"##, "1:13", "'pattern' is not a regular expression"),
    (##"{"pattern": "^(a)\\1$"}"##, "1:13", "backreferences ('\\1') need backtracking"),
    (##"{"pattern": "^(?=x)"}"##, "1:13", "lookaround ('(?=', '(?!', '(?<=', '(?<!') needs backtracking"),
    (##"{"minLength": -1}"##, "1:15", "'minLength' must be a non-negative integer"),
    ("{\n  \"required\": \"title\"\n}", "2:15", "'required' must be an array"),
  ])
  func badSchemasAreRefusedWithTheirPosition(text: String, position: String, message: String) throws {
    do {
      _ = try schema(text, file: "s.json")
      Issue.record("accepted: \(text)")
    } catch let error as FolioError {
      #expect(error.code == .invalidConfig)
      #expect(error.message.contains(message), "\(error)")
      if !position.isEmpty { #expect(error.location?.description == "s.json:" + position, "\(error)") }
    }
  }

  /// 40 levels of `anyOf: [{$ref}, {$ref}]` (3 KB): without memoising
  /// each (choice, place) the check of `{"v": 1}` takes 2^40 steps.
  @Test func choicesThatShareSubschemasAreCheckedOncePerPlace() throws {
    var defs: [String] = []
    for level in 0..<40 {
      let next = "#/$defs/l\(level + 1)"
      defs.append(#""l\#(level)": {"anyOf": [{"$ref": "\#(next)"}, {"$ref": "\#(next)"}]}"#)
    }
    defs.append(#""l40": {"properties": {"v": {"type": "string"}}}"#)
    let text = ##"{"$ref": "#/$defs/l0", "$defs": {"## + defs.joined(separator: ", ") + "}}"
    let deep = try schema(text)
    #expect(deep.accepts(["v": "one"]))
    #expect(!deep.accepts(["v": 1]))
    #expect(
      deep.validate(["v": 1]).first?.message.hasPrefix("matches none of the 2 choices of anyOf") == true)
    // A pattern that makes a backtracking engine take minutes, in a
    // document a merge could bring.
    let slow = try schema(##"{"properties": {"title": {"pattern": "^([a-zA-Z0-9]+\\s?)*$"}}}"##)
    #expect(!slow.accepts(["title": .string(String(repeating: "a", count: 40) + "!")]))
    #expect(slow.accepts(["title": "plain words here"]))
  }

  @Test func pointersEscapeAndLocate() throws {
    let pointer = try #require(JSONPointer(fragment: "#/a~1b/c%25d/~0e"))
    #expect(pointer.tokens == ["a/b", "c%d", "~e"])
    #expect(pointer.description == "/a~1b/c%d/~0e")
    #expect(JSONPointer(fragment: pointer.fragment) == pointer)
    #expect(JSONPointer(fragment: "#/a~2") == nil && JSONPointer(fragment: "#x") == nil)
    let text = ##"{"x": [1, {"a/b": {"c%d": {"\u007ee": "here"}}}], "y": 2}"##
    let bytes = Array(text.utf8)
    let located = try #require(
      JSONPointer(["x", "1"]).appending("a/b").appending("c%d").appending("~e").location(in: bytes))
    #expect(Array(bytes[located.value..<(located.value + 6)]) == Array(##""here""##.utf8))
    #expect(JSONPointer(["x", "2"]).location(in: bytes) == nil)
    #expect(JSONPointer(["y"]).lineAndColumn(in: bytes, atKey: true).column == 51)
  }

  @Test func allowedTypesFollowRefsAndChoices() throws {
    let schema = try schema(
      ##"{"$ref": "#/$defs/doc", "$defs": {"doc": {"properties": {"n": {"anyOf": [{"type": "string"}, {"const": 2}]}, "e": {"enum": ["a", null]}}, "additionalProperties": {"type": "array"}}}}"##
    )
    #expect(schema.allowedTypes(ofProperty: "n").types == [.string, .integer])
    #expect(schema.allowedTypes(ofProperty: "e").types == [.string, .null])
    #expect(schema.allowedTypes(ofProperty: "other").types == .array)
  }

  @Test func columnKindsMustAgreeWithTheSchema() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    try scratch.write(
      "s/t.json", ##"{"properties": {"views": {"type": "string"}, "tags": {"type": ["array", "null"]}}}"##)
    let yaml =
      "version: 1\ntables:\n  t:\n    schema: s/t.json\n    columns:\n      tags: set\n      views: counter\n"
    try scratch.write("folio.yaml", yaml)
    #expect {
      try Config(contentsOf: scratch.url.appendingPathComponent("folio.yaml"))
    } throws: { error in
      (error as? FolioError)?.description
        == "folio.yaml:7:7: error: column 'views' of table 't' is a counter, but its schema (t.json#/properties/views) allows no integer; allow \"integer\" (and \"string\", if it may pass 32 bits: a counter past 2147483647 is stored as a decimal string)"
    }
    try scratch.write(
      "s/t.json",
      ##"{"properties": {"views": {"type": ["integer", "string"]}, "tags": {"type": ["array", "null"]}}}"##)
    let config = try Config(contentsOf: scratch.url.appendingPathComponent("folio.yaml"))
    #expect(config.table(named: "t")?.schema?.file == "s/t.json")
    // From text alone the file is named, not read.
    let text = try Config(yaml: yaml)
    #expect(text.table(named: "t")?.schemaFile == "s/t.json" && text.table(named: "t")?.schema == nil)
  }

  @Test(arguments: [
    ("../outside.json", "must name a file inside the store"), ("/etc/x.json", "not absolute"),
    (".git/x.json", "points into a .git folder"),
  ])
  func schemaPathsStayInTheStore(path: String, message: String) throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    try scratch.write("folio.yaml", "version: 1\ntables:\n  t:\n    schema: \(path)\n")
    #expect {
      try Config(contentsOf: scratch.url.appendingPathComponent("folio.yaml"))
    } throws: { error in
      let error = error as? FolioError
      return error?.location?.description == "folio.yaml:4:13" && error?.message.contains(message) == true
    }
  }

  /// A schema file that does not exist (never committed where it was made)
  /// leaves the config loadable: the table says so, and writes to it are
  /// refused (SchemaCLITests).
  @Test func aMissingSchemaFileIsNotedNotFatal() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    try scratch.write("folio.yaml", "version: 1\ntables:\n  t:\n    schema: missing.json\n")
    let table = try #require(
      try Config(contentsOf: scratch.url.appendingPathComponent("folio.yaml")).table(named: "t"))
    #expect(table.schemaMissing && table.schema == nil)
    #expect(table.missingSchemaError?.message.contains("'missing.json' of table 't' does not exist") == true)
  }

  @Test func dateTimesFollowRFC3339() {
    for valid in ["2026-12-01T09:30:00Z", "2024-02-29T23:59:60Z", "2026-12-01t09:30:00.5+01:00"] {
      #expect(DateTimeFormat.isValid(valid), "\(valid)")
    }
    for invalid in [
      "2026-12-01", "2025-02-29T00:00:00Z", "2026-12-01T09:30Z", "2026-12-01T09:30:00",
      "2026-12-01T12:59:60Z",
    ] {
      #expect(!DateTimeFormat.isValid(invalid), "\(invalid)")
    }
  }

  @Test func inferenceProposesTypesRequiredEnumsAndFormats() throws {
    var inference = SchemaInference()
    let documents: [JSONValue] = [
      ["id": "a", "status": "open", "n": 1, "at": "2026-12-01T09:00:00Z", "meta": ["k": 1]],
      ["id": "b", "status": "done", "n": 2.5, "at": "2026-12-02T09:00:00Z"],
      ["id": "c", "status": "open", "n": 3, "at": "2026-12-03T09:00:00Z", "views": "4294967296"],
    ]
    for document in documents { inference.add(document.objectValue!) }
    let proposal = inference.schema(title: "t", counters: ["views"], sets: ["tags"])
    let properties = try #require(proposal["properties"]?.objectValue)
    #expect(proposal["required"] == ["at", "id", "n", "status"])
    #expect(properties["status"] == ["enum": ["done", "open"], "type": "string"])
    #expect(properties["n"]?["type"] == "number")
    #expect(properties["at"] == ["format": "date-time", "type": "string"])
    #expect(properties["meta"]?["properties"]?["k"]?["type"] == "integer")
    #expect(properties["tags"]?["type"] == "array")
    // The proposal is a schema Folio reads, and every document passes it.
    let schema = try JSONSchema(bytes: proposal.canonicalBytes(), file: "t.json")
    for document in documents { #expect(schema.accepts(document), "\(schema.validate(document))") }
    #expect(!schema.accepts(["id": "d", "status": "open", "n": 1, "at": "2026-12-03T09:00:00Z", "nope": 1]))
  }
}
