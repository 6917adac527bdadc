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

  var address: DocumentAddress

  init(arguments: [String]) throws {
    address = try DocumentAddress(arguments: arguments)
  }

  func run(in context: CommandContext) throws -> Int32 {
    guard try context.openStore().collection(address.table).findByID(address.pk).remove() else {
      throw address.notFound
    }
    return 0
  }
}
