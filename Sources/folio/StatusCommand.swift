import Folio

struct StatusCommand: Command {
  static let name = "status"
  static let abstract = "Show pending mutations per table, invalid documents and evicted ones."
  static let usage = "folio status [--json]"
  static let details = """
    OPTIONS:
      --json   One JSON object per table (NDJSON), then one per problem.

    'pending ops' are mutations recorded since the last commit; 'edited outside Folio'
    are files changed with no op yet ('folio commit' records them from the diff).
    'open conflicts' counts the values concurrent assignments overwrote in merges
    ('folio conflicts' lists them; with --json, each table's "conflicts").
    'schema:' lines are documents that break their table's JSON Schema: merges and
    edits outside Folio are not blocked by it (with --json: {"schemaViolation": …}).
    A write that an interrupted process left and that could not be completed is
    shown as 'pending write' (with --json: {"pendingWrite": reason, "code", "path"}).
    A document file that does not parse is named on stderr as 'path:line:col: warning:
    left out: …' (with --json: {"problem": …}), and the exit status is then 3, as for
    'query', 'export' and 'commit'.
    """

  var json: Bool

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments, flags: ["--json"])
    try parsed.expectPositionals(0...0)
    json = parsed.flag("--json")
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    // A large store's scan starts a daemon, so the next one looks only at what changed.
    store.startIndexDaemonOnDemand(executable: Executable.path)
    let status = try store.status()
    let conflicts = Dictionary(grouping: try store.conflicts(), by: \.table).mapValues(\.count)
    if json {
      printJSON(status, conflicts: conflicts, store: store)
      return status.problems.isEmpty ? 0 : LeftOutFiles.exitStatus
    }
    printBranch(status)
    var clean = printTables(status, conflicts: conflicts)
    // Named as query, export and commit name them (on stderr, exit 3).
    let leftOut = LeftOutFiles.report(status.problems)
    if leftOut != 0 { clean = false }
    if printUnfinishedWork(status, store: store) { clean = false }
    if clean { Output.print("nothing to commit") }
    return leftOut
  }

  /// `--json`: one object per table, absent table, problem, schema
  /// violation and unfinished step.
  private func printJSON(_ status: StoreStatus, conflicts: [String: Int], store: Store) {
    for table in status.tables {
      let object: JSONObject = [
        "table": .string(table.name), "pendingOps": .number(String(table.pendingOps)),
        "changed": .array(table.changedDocuments.map(JSONValue.string)),
        "editedOutsideFolio": .array(table.externalEdits.map(JSONValue.string)),
        "evicted": .array(table.evicted.map(JSONValue.string)),
        "conflicts": .number(String(conflicts[table.name] ?? 0)),
      ]
      Output.print(JSONValue.object(object).compactString)
    }
    for name in status.absentTables {
      Output.print(JSONValue.object(["table": .string(name), "absent": .bool(true)]).compactString)
    }
    for problem in status.problems {
      Output.print(JSONValue.object(["problem": .string(problem.description)]).compactString)
    }
    for violation in status.schemaViolations {
      Output.print(JSONValue.object(["schemaViolation": .string(violation.description)]).compactString)
    }
    if let merge = store.stoppedGitMerge {
      Output.print(JSONValue.object(["stoppedGitMerge": .string(merge)]).compactString)
    }
    if let pending = store.pendingRecoveryError {
      let object: JSONObject = [
        "pendingWrite": .string(pending.message), "code": .string(pending.code.rawValue),
        "path": pending.path.map(JSONValue.string) ?? .null,
      ]
      Output.print(JSONValue.object(object).compactString)
    }
  }

  /// The branch and commit, as git words them, and the tables a partial
  /// replica does not hold.
  private func printBranch(_ status: StoreStatus) {
    let branch = status.branch.hasPrefix("refs/heads/") ? String(status.branch.dropFirst(11)) : status.branch
    if status.branch == "HEAD", let head = status.head {
      Output.print("HEAD detached at \(head.prefix(12))")  // as git says it
    } else {
      Output.print(
        "On branch \(branch)" + (status.head.map { " at \($0.prefix(12))" } ?? " (no commits yet)"))
    }
    if !status.absentTables.isEmpty {
      // Not a change: said so that no one takes their absence for empty tables.
      Output.print(
        "partial replica: not holding \(status.absentTables.joined(separator: ", ")) "
          + "(folio tables subscribe NAME fetches one)")
    }
  }

  /// Each table's pending ops, changes, evictions and open conflicts.
  /// - Returns: whether none has any.
  private func printTables(_ status: StoreStatus, conflicts: [String: Int]) -> Bool {
    var clean = true
    for table in status.tables
    where table.pendingOps > 0 || !table.changedDocuments.isEmpty || !table.evicted.isEmpty {
      clean = false
      Output.print(
        "\(table.name): \(table.pendingOps) pending op(s), \(table.changedDocuments.count) changed document(s)"
      )
      if !table.externalEdits.isEmpty {
        Output.print("  edited outside Folio: " + table.externalEdits.joined(separator: ", "))
      }
      if !table.evicted.isEmpty { Output.print("  evicted: " + table.evicted.joined(separator: ", ")) }
    }
    for table in status.tables where (conflicts[table.name] ?? 0) > 0 {
      clean = false
      Output.print(
        "\(table.name): \(conflicts[table.name]!) open conflict(s); see 'folio conflicts \(table.name)'")
    }
    return clean
  }

  /// Schema violations, a stopped git merge, an unfinished checkout or write.
  /// - Returns: whether there was any.
  private func printUnfinishedWork(_ status: StoreStatus, store: Store) -> Bool {
    var any = false
    for violation in status.schemaViolations {
      any = true
      Output.print("schema: \(violation.headline)")
    }
    if let merge = store.stoppedGitMerge {
      any = true
      Output.print(
        "a git merge of \(merge.prefix(12)) stopped before its commit; 'folio commit' concludes it by replay")
    }
    if let problem = store.pendingCheckoutProblem() {
      any = true
      Output.print("unfinished sync checkout: \(problem)")
    } else if let pending = store.pendingRecoveryError {
      any = true
      Output.print("pending write: \(pending.message)")
    }
    return any
  }
}
