import Folio
import FolioSystem

struct SyncCommand: Command {
  static let name = "sync"
  static let abstract = "Commit, fetch, merge (counters add, sets union) and push."
  static let usage = "folio sync [REMOTE] [--no-push] [--json]"
  static let details = """
    ARGUMENTS:
      REMOTE      The git remote (default: the branch's upstream, as 'git pull' uses it,
                  else origin). The upstream's branch is fetched and pushed to.

    OPTIONS:
      --no-push   Fetch and merge only.
      --json      Print the summary as one JSON object.

    Steps: commit pending changes; fetch; fast-forward when possible, otherwise merge,
    resolving every table document changed on both sides by replaying both sides' ops;
    update the working tree (never overwriting a file edited since the commit); push,
    and if another push won the race, fetch and merge again.
    """

  var remote: String?
  var push: Bool
  var json: Bool

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments, flags: ["--no-push", "--json"])
    try parsed.expectPositionals(0...1)
    if let remote = parsed.positionals.first { self.remote = remote }
    push = !parsed.flag("--no-push")
    json = parsed.flag("--json")
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    // A large store's scan starts a daemon, so the next one looks only at what changed.
    store.startIndexDaemonOnDemand(executable: Executable.path)
    let summary = try store.sync(remote: remote, push: push)
    let remote = summary.remote
    for problem in summary.committed.problems {
      Output.error("warning: left out: \(problem.commandLineText)")
    }
    for path in summary.oversized {
      Output.error(
        "warning: \(path) is past the size limit (an older build wrote it), so the merge kept it as it is here; "
          + "make it smaller, or remove it with 'folio rm'")
    }
    if json {
      let object: JSONObject = [
        "action": .string(summary.action.rawValue), "resolved": .number(String(summary.resolvedDocuments)),
        "pushed": .bool(summary.pushed), "rounds": .number(String(summary.rounds)),
        "head": summary.head.map(JSONValue.string) ?? .null,
        "committed": summary.committed.commit.map(JSONValue.string) ?? .null,
        "transfer_seconds": .number(String(format: "%.3f", summary.transferTime.seconds)),
      ]
      Output.print(JSONValue.object(object).compactString)
      return 0
    }
    if let commit = summary.committed.commit {
      Output.print("committed \(commit.prefix(12)): \(summary.committed.documents) document(s)")
    }
    switch summary.action {
    case .upToDate: Output.print("\(remote): up to date")
    case .fastForward: Output.print("\(remote): fast-forwarded to \(summary.head?.prefix(12) ?? "")")
    case .merged:
      Output.print("\(remote): merged, \(summary.resolvedDocuments) document(s) resolved by replay")
    }
    if summary.pushed { Output.print("pushed to \(remote)") }
    return 0
  }
}
