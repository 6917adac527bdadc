import Folio

struct FormatCommand: Command {
  static let name = "fmt"
  static let abstract = "Rewrite documents in canonical form (sorted keys, 2-space indent)."
  static let usage = "folio fmt [TABLE]"
  static let details = """
    ARGUMENTS:
      TABLE    Only this table (default: every table).

    Prints each file it rewrote. Content does not change, so nothing is logged.
    Files that are not valid JSON are reported as 'path:line:col: error: …' and
    left untouched; then it exits 1.
    """

  var table: String?

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments)
    try parsed.expectPositionals(0...1)
    table = parsed.positionals.first
  }

  func run(in context: CommandContext) throws -> Int32 {
    let (rewritten, problems) = try context.openStore().format(table: table)
    for path in rewritten { Output.print(path) }
    for problem in problems { Output.error(problem.commandLineText) }
    return problems.isEmpty ? 0 : 1
  }
}
