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

  var address: DocumentAddress

  init(arguments: [String]) throws {
    address = try DocumentAddress(arguments: arguments)
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    guard let document = try store.collection(address.table).findByID(address.pk).exec() else {
      throw address.notFound
    }
    Output.printRaw(document.json.canonicalBytes())
    return 0
  }
}
