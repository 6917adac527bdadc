import Folio

struct LogCommand: Command {
  static let name = "log"
  static let abstract = "Print the op log of every replica as NDJSON, oldest first."
  static let usage = "folio log [TABLE [PK]]"
  static let details = """
    ARGUMENTS:
      TABLE    Only ops on this table.
      PK       Only ops on this document.

    Each line is one op: hlc, table, pk, op, and its set, unset and transforms.
    Pipe it into jq, for example: folio log todos | jq -c '.set'

    Merges replay these ops in hlc order. A remove beats an update: an update
    that replays after the remove changes nothing, and the removed values are
    not listed by 'folio conflicts'; both ops stay here to show what happened.
    """

  var table: String?
  var pk: String?

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments)
    try parsed.expectPositionals(0...2)
    table = parsed.positionals.first
    pk = parsed.positionals.count > 1 ? parsed.positionals[1] : nil
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    if let table { _ = try store.table(named: table) }
    for op in try store.ops(table: table, pk: pk) { Output.print(op.json.compactString) }
    return 0
  }
}
