import Folio
import Foundation

struct PutCommand: Command {
  static let name = "put"
  static let abstract = "Replace a whole document with the JSON in FILE or on stdin."
  static let usage = "folio put TABLE [PK] [FILE|-]"
  static let details = """
    ARGUMENTS:
      TABLE    The table.
      PK       The pk. Without it, the pk is read from the document's key column
               (and generated if that is missing too).
      FILE     A file holding one JSON object, or - for stdin (the default).

    With one argument after TABLE, it is FILE if it is - or an existing file, else PK.
    The change is recorded as the diff from the current document, read through the
    column kinds in folio.yaml (a counter edit is an increment, a set edit a union
    and remove). Prints what changed as NDJSON.
    """

  var table: String
  var pk: String?
  var file: String

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments)
    try parsed.expectPositionals(1...3)
    table = parsed.positionals[0]
    file = "-"
    switch parsed.positionals.count {
    case 3:
      pk = parsed.positionals[1]
      file = parsed.positionals[2]
    case 2:
      let argument = parsed.positionals[1]
      if argument == "-" || FileManager.default.fileExists(atPath: argument) {
        file = argument
      } else {
        pk = argument
      }
    default:
      break
    }
  }

  func run(in context: CommandContext) throws -> Int32 {
    let bytes = try readInput(file, in: context)
    let document = try JSONValue(parsing: bytes, file: file == "-" ? "<stdin>" : file)
    let store = try context.openStore()
    let given = pk
    let (pk, results) = try store.write { try $0.put(table: table, pk: given, document: document) }
    if results.isEmpty { Output.error("'\(pk)' unchanged") }
    for result in results { Output.print(result.json.compactString) }
    return 0
  }
}
