import Folio

struct RemoveCommand: Command {
  static let name = "rm"
  static let abstract = "Remove a document; the removal is recorded and syncs as a delete."
  static let usage = "folio rm TABLE PK"
  static let details = """
    ARGUMENTS:
      TABLE    The table.
      PK       The document's pk.

    Exits 1 with 'error: NOT_FOUND: …' when there is no such document.
    See also 'folio evict', which removes only the local copy.
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
    guard try context.openStore().collection(table).findByID(pk).remove() else {
      throw FolioError(.notFound, "no document '\(pk)' in table '\(table)'", table: table, pk: pk)
    }
    return 0
  }
}
