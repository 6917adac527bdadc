import Folio

struct GetCommand: Command {
  static let name = "get"
  static let abstract = "Print a document as canonical JSON."
  static let usage = "folio get TABLE PK [--as-of REV | --path]"
  static let details = """
    ARGUMENTS:
      TABLE    The table.
      PK       The document's pk.

    OPTIONS:
      --as-of REV   The document as commit REV held it, read from git without a checkout:
                    an id, branch, tag, HEAD~N, or a date (2026-11-30, '2 days ago')
                    meaning the branch's last commit before it.
      --path        Print the path of the document's file, relative to the store, instead:
                    where it is, or where a new one goes (in a nested table, its folders,
                    such as data/todos/86/f/a.json), to open or create in an editor.

    Exits 1 with 'error: NOT_FOUND: …' when there is no such document.
    """

  var address: DocumentAddress
  var asOf: String?
  var path: Bool

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments, options: ["--as-of"], flags: ["--path"])
    address = try DocumentAddress(parsed)
    asOf = parsed.value("--as-of")
    path = parsed.flag("--path")
    if path && asOf != nil { throw UsageError("--path names the file in the working tree; drop --as-of") }
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    if path {
      Output.print(try store.table(named: address.table).path(of: address.pk))
      return 0
    }
    let found =
      try asOf.map { try store.snapshot(asOf: $0).findByID(table: address.table, pk: address.pk) }
      ?? store.collection(address.table).findByID(address.pk).exec()
    guard let document = found else {
      if let asOf {
        throw FolioError(
          .notFound, address.notFound.message + " at '\(asOf)'", table: address.table, pk: address.pk)
      }
      throw address.notFound
    }
    Output.printRaw(document.json.canonicalBytes())
    return 0
  }
}
