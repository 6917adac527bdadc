import Folio

struct CommitCommand: Command {
  static let name = "commit"
  static let abstract = "Commit pending document changes and op log lines to git."
  static let usage = "folio commit [-m MESSAGE] [--json]"
  static let details = """
    OPTIONS:
      -m, --message MESSAGE   The commit message (default: a summary per table).
      --json                  Print the summary as one JSON object.

    Only files that changed are read: stat data in git's index tells which. A document
    edited outside Folio (no 'folio watch' running) is recorded as an op from its diff,
    read through the column kinds, so it merges like any other change. Evicted documents
    stay in git. Invalid documents are left out and reported as file:line:col; the exit
    status is then 3.

    A 'git pull' or 'git merge' that stopped with conflicts git gives no driver (a
    document removed on one side and changed on the other) is concluded first: the
    merge is replayed as 'folio sync' would, and committed with both parents.
    """

  var message: String?
  var json: Bool

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments, options: ["-m", "--message"], flags: ["--json"])
    try parsed.expectPositionals(0...0)
    message = parsed.value("-m") ?? parsed.value("--message")
    json = parsed.flag("--json")
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    // A large store's scan starts a daemon, so the next one looks only at what changed.
    store.startIndexDaemonOnDemand(executable: Executable.path)
    let summary = try store.commit(message: message)
    let status = LeftOutFiles.report(summary.problems)
    if let merge = summary.concludedMerge, !json {
      Output.print("concluded the stopped git merge by replay: \(merge.prefix(12))")
    }
    if json {
      let object: JSONObject = [
        "commit": summary.commit.map(JSONValue.string) ?? .null,
        "documents": .number(String(summary.documents)),
        "syntheticOps": .number(String(summary.syntheticOps)),
        "problems": .number(String(summary.problems.count)),
        "concludedMerge": summary.concludedMerge.map(JSONValue.string) ?? .null,
      ]
      Output.print(JSONValue.object(object).compactString)
    } else if let commit = summary.commit {
      var line = "committed \(commit.prefix(12)): \(summary.documents) document(s)"
      if summary.syntheticOps > 0 {
        line += ", \(summary.syntheticOps) edit(s) made outside Folio recorded as ops"
      }
      Output.print(line)
    } else {
      Output.print("nothing to commit")
    }
    return status
  }
}
