import Folio

struct CompactCommand: Command {
  static let name = "compact"
  static let abstract = "Drop op log lines that every known branch has merged, and commit."
  static let usage = "folio compact [-m MESSAGE]"
  static let details = """
    OPTIONS:
      -m, --message MESSAGE   The commit message.

    Known branches are the current one and every remote-tracking branch; run 'git fetch'
    (or 'folio sync') first so they are current. Merges with replicas that were offline
    since still resolve: a change no op explains is diffed into a synthetic op.
    """

  var message: String?

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments, options: ["-m", "--message"])
    try parsed.expectPositionals(0...0)
    message = parsed.value("-m") ?? parsed.value("--message")
  }

  func run(in context: CommandContext) throws -> Int32 {
    let summary = try context.openStore().compact(message: message)
    if summary.droppedOps == 0 {
      Output.print("nothing to compact (\(summary.keptOps) op(s) kept)")
    } else {
      Output.print(
        "dropped \(summary.droppedOps) op(s) merged everywhere (up to \(summary.mergedEverywhere?.prefix(12) ?? "")); kept \(summary.keptOps)"
      )
    }
    return 0
  }
}
