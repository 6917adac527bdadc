import Folio

struct SchemaCommand: Command {
  static let name = "schema"
  static let abstract = "Print a table's JSON Schema, or propose one from its documents."
  static let usage = "folio schema TABLE [--infer]"
  static let details = """
    ARGUMENTS:
      TABLE     The table.

    OPTIONS:
      --infer   Propose a schema from the documents: each property's types, the
                properties every document holds as required, an enum for strings with
                few distinct values, format date-time where every value is one; counter
                columns allow an integer or its decimal string, set columns an array.
                Other top-level properties are refused (additionalProperties: false).

    Without --infer, prints the schema file that 'schema:' names in the table's entry in
    folio.yaml, as it is. Save a proposal there and name it to put it in effect:
      folio schema todos --infer > schemas/todos.schema.json
    See docs/schemas.md for the keywords Folio checks.
    """

  var table: String
  var infer: Bool

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments, flags: ["--infer"])
    try parsed.expectPositionals(1...1)
    table = parsed.positionals[0]
    infer = parsed.flag("--infer")
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    if infer {
      Output.print(try store.inferSchema(table: table).canonicalString, terminator: "")
    } else {
      Output.printRaw(try store.schemaText(table: table))
    }
    return 0
  }
}
