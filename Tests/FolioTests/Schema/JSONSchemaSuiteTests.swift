import Folio
import FolioCore
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

/// The official JSON-Schema-Test-Suite cases (draft 2020-12) for the
/// keywords Folio checks, copied as data into `Resources/JSONSchemaTestSuite`
/// (MIT licence, in that folder). Each group's schema is compiled and every
/// case must come out valid or invalid as the suite says.
///
/// Groups whose schema needs a keyword outside the subset are skipped, and
/// the test proves that each is refused when the file is read (Folio never
/// ignores a keyword). They are:
/// - additionalProperties.json: the groups with `patternProperties` (2),
///   `allOf`, `propertyNames` and `dependentSchemas`;
/// - items.json: the groups with `prefixItems` (4) and `allOf`;
/// - properties.json: the group with `patternProperties`;
/// - ref.json: the groups with `prefixItems`, `maxItems`, `allOf` (2) or
///   `unevaluatedProperties`, and those whose `$ref` leaves the file or
///   names an anchor: remote and relative URIs, URNs, `#bigint` (15).
///
/// `defs.json` is not copied: its one group checks a schema against the
/// remote metaschema. `$defs` is covered by the `ref.json` groups.
struct JSONSchemaSuiteTests {
  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Resources/JSONSchemaTestSuite")

  static let files = [
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "minimum", "maximum",
    "minLength", "maxLength", "pattern", "ref", "anyOf", "oneOf", "boolean_schema", "format-date-time",
  ]

  @Test(arguments: files) func suite(_ name: String) throws {
    let bytes = Array(try Data(contentsOf: Self.folder.appendingPathComponent(name + ".json")))
    let groups = try #require(try JSONValue(parsing: bytes).arrayValue)
    var ran = 0
    for group in groups {
      let description = group["description"]?.stringValue ?? "?"
      let schemaValue = try #require(group["schema"])
      let schema: JSONSchema
      do {
        schema = try JSONSchema(bytes: schemaValue.canonicalBytes(), file: name + ".json")
      } catch let error as FolioError {
        let unsupported =
          error.message.contains("unsupported keyword") || error.message.contains("is not supported")
        #expect(unsupported, "\(name): '\(description)': refused for another reason: \(error)")
        continue
      }
      for test in try #require(group["tests"]?.arrayValue) {
        let data = try #require(test["data"])
        let valid = try #require(test["valid"]?.boolValue as Bool?)
        let violations = schema.validate(data)
        #expect(
          violations.isEmpty == valid,
          "\(name): '\(description)' / '\(test["description"]?.stringValue ?? "?")': expected \(valid ? "valid" : "invalid"), got \(violations)"
        )
        #expect(schema.accepts(data) == valid)
        ran += 1
      }
    }
    #expect(ran > 0, "\(name): no case ran")
  }
}
