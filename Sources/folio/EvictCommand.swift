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

  var address: DocumentAddress

  init(arguments: [String]) throws {
    address = try DocumentAddress(arguments: arguments)
  }

  func run(in context: CommandContext) throws -> Int32 {
    guard try context.openStore().collection(address.table).findByID(address.pk).evict() else {
      throw address.notFound
    }
    return 0
  }
}
