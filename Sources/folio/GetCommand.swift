import Folio

struct GetCommand: Command {
  static let name = "get"
  static let abstract = "Print a document as canonical JSON."
  static let usage = "folio get TABLE PK"
  static let details = """
    ARGUMENTS:
      TABLE    The table.
      PK       The document's pk.

    Exits 1 with 'error: NOT_FOUND: …' when there is no such document.
    """

  var table: String
  var pk: String

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments)
    try parsed.expectPositionals(2...2)
    table = parsed.positionals[0]
    pk = parsed.positionals[1]
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    guard let document = try store.collection(table).findByID(pk).exec() else {
      throw FolioError(.notFound, "no document '\(pk)' in table '\(table)'", table: table, pk: pk)
    }
    Output.printRaw(document.json.canonicalBytes())
    return 0
  }
}
