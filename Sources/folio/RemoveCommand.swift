import Folio

struct RemoveCommand: Command {
  static let name = "rm"
  static let abstract = "Remove a document; the removal is recorded and syncs as a delete."
  static let usage = "folio rm TABLE (PK | --where EXPR [--dry-run] [--strict])"
  static let details = """
    ARGUMENTS:
      TABLE          The table.
      PK             The document's pk.

    OPTIONS:
      --where EXPR   Instead of PK: every document that matches EXPR, in one
                     transaction, one recorded removal per document; prints one
                     NDJSON line per removed document. A filter that matches
                     nothing prints a note to stderr and exits 0.
      --dry-run      With --where: print the pks that would go, remove nothing.
      --strict       With --where: a field no document has is an error (exit 64), not a
                     warning; nothing is removed.

    With a PK, exits 1 with 'error: NOT_FOUND: …' when there is no such document.
    See also 'folio evict', which removes only the local copy.
    """

  var table: String
  var target: WriteTarget

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments, options: WriteTarget.options, flags: WriteTarget.flags)
    (table, target) = try WriteTarget.parse(parsed)
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    switch target {
    case .pk(let pk):
      guard try store.collection(table).findByID(pk).remove() else {
        throw FolioError(.notFound, "no document '\(pk)' in table '\(table)'", table: table, pk: pk)
      }
    case .filter(let expression, let dryRun, _):
      try target.checkFields(store, table: table)
      let outcome = try store.apply(table: table, where: expression, op: .remove, dryRun: dryRun)
      target.report(outcome, table: table)
    }
    return 0
  }
}
