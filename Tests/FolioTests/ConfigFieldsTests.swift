import FolioSystem
import Testing

@testable import FolioCore

/// `fields:`, a table's column order as its imported file had it: read,
/// rendered, and set in place by ``ConfigEditor`` without touching the
/// rest of the file.
struct ConfigFieldsTests {
  @Test func readsAndRendersFields() throws {
    let config = try Config(
      yaml: """
        version: 1
        tables:
          p:
            fields: [species, "bill length (mm)", a.b, "1"]
        """)
    let table = try #require(config.table(named: "p"))
    #expect(table.fields == ["species", "bill length (mm)", "a.b", "1"])
    // Round trip through the rendering.
    #expect(try Config(yaml: config.yamlText()) == config)
  }

  @Test(arguments: [
    ("fields: x", "'fields' of table 'p' must be a list of strings; found a plain scalar"),
    ("fields: [a, a]", "field 'a' of table 'p' is listed twice"),
    ("fields: [\"\"]", "field of table 'p' must not be empty"),
    (
      "feilds: [a]",
      "unknown key 'feilds' in table 'p'; expected one of: path, key, order, indexes, columns, schema, fields, renamed-from, layout"
    ),
  ])
  func badFieldsAreErrorsAtTheirPlace(setting: String, message: String) throws {
    let error = try #require(throws: FolioError.self) {
      try Config(yaml: "version: 1\ntables:\n  p:\n    \(setting)\n")
    }
    #expect(error.location?.line == 4, "\(error)")
    #expect(error.message == message)
  }

  static let commented = """
    # the store
    version: 1
    tables:
      # penguins first
      p:
        path: data/p   # where they live
        key: id

      # then the rest
      q:
        path: data/q
    sync:
      remote: origin
    """

  @Test func settingFieldsAddsOneLineAndKeepsComments() throws {
    let text = try ConfigEditor(text: Self.commented).setting(fields: ["b", "a"], of: "p")
    #expect(
      text == """
        # the store
        version: 1
        tables:
          # penguins first
          p:
            path: data/p   # where they live
            key: id
            fields: [b, a]

          # then the rest
          q:
            path: data/q
        sync:
          remote: origin

        """)
    // The last table, and then a second time, which replaces the line.
    let last = try ConfigEditor(text: text).setting(fields: ["x y"], of: "q")
    let again = try ConfigEditor(text: last).setting(fields: ["x y", "z"], of: "q")
    #expect(again.contains("    path: data/q\n    fields: [\"x y\", z]\nsync:\n"), "\(again)")
    #expect(try Config(yaml: again).table(named: "q")?.fields == ["x y", "z"])
    #expect(try Config(yaml: again).table(named: "p")?.fields == ["b", "a"])
  }

  @Test func settingFieldsReplacesAMultiLineList() throws {
    let text = """
      version: 1
      tables:
        p:
          fields:
            - a
            - b
          key: id
      """
    let edited = try ConfigEditor(text: text).setting(fields: ["a", "b", "c"], of: "p")
    #expect(edited == "version: 1\ntables:\n  p:\n    fields: [a, b, c]\n    key: id\n")
  }

  @Test func settingFieldsOfATableWithNoSettings() throws {
    let edited = try ConfigEditor(text: "version: 1\ntables:\n  p:\n").setting(fields: ["a"], of: "p")
    #expect(edited == "version: 1\ntables:\n  p:\n    fields: [a]\n")
    #expect(try Config(yaml: edited).table(named: "p")?.path == "p")
  }

  @Test func settingFieldsOfAFlowStyleEntryIsAnErrorAtIt() throws {
    let error = try #require(throws: FolioError.self) {
      try ConfigEditor(text: "version: 1\ntables:\n  p: {path: data/p}\n").setting(fields: ["a"], of: "p")
    }
    #expect(error.code == .invalidConfig)
    #expect(error.location?.line == 3 && error.location?.column == 6)
    #expect(
      error.message.hasPrefix("table 'p' is written in flow style ({…}); write its settings as a block"))
  }

  @Test func settingFieldsOfAnUnknownTableNamesTheTables() throws {
    let error = try #require(throws: FolioError.self) {
      try ConfigEditor(text: Self.commented).setting(fields: ["a"], of: "r")
    }
    #expect(error.code == .unknownTable)
  }
}
