import Folio

struct EvictCommand: Command {
  static let name = "evict"
  static let abstract = "Remove the local copy of a document only; it never syncs as a delete."
  static let usage = "folio evict TABLE PK"
  static let details = """
    ARGUMENTS:
      TABLE    The table.
      PK       The document's pk.

    Nothing is recorded in the op log. Folio remembers the document was evicted, so
    a later commit does not record a delete. Exits 1 when there is no such document.
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
    guard try context.openStore().collection(table).findByID(pk).evict() else {
      throw FolioError(.notFound, "no document '\(pk)' in table '\(table)'", table: table, pk: pk)
    }
    return 0
  }
}
