import Folio

/// What `folio apply` and `folio rm` act on: `TABLE PK`, or `TABLE --where
/// EXPR [--dry-run]` (seed `002_*` "Write with filters").
enum WriteTarget {
  case pk(String)
  case filter(String, dryRun: Bool, strict: Bool)

  /// The options this target adds to a command.
  static let options: Set<String> = ["--where"]
  /// The flags this target adds to a command.
  static let flags: Set<String> = ["--dry-run", "--strict"]

  /// The table and the target from `TABLE PK` or `TABLE --where EXPR`.
  /// - Throws: ``UsageError`` for a filter that does not parse, as `folio
  ///   query` does (exit 64), before the store is opened.
  static func parse(_ parsed: CommandLineArguments) throws -> (table: String, target: WriteTarget) {
    if let expression = parsed.value("--where") {
      try parsed.expectPositionals(1...1)
      do {
        _ = try Predicate(parsing: expression, source: "--where")
      } catch let error as FolioError where error.code == .invalidQuery {
        throw UsageError(QueryArguments.explain(error, expression: expression))
      }
      return (
        parsed.positionals[0],
        .filter(expression, dryRun: parsed.flag("--dry-run"), strict: parsed.flag("--strict"))
      )
    }
    if parsed.flag("--dry-run") { throw UsageError("'--dry-run' needs '--where'") }
    if parsed.flag("--strict") { throw UsageError("'--strict' needs '--where'") }
    try parsed.expectPositionals(2...2)
    return (parsed.positionals[0], .pk(parsed.positionals[1]))
  }

  /// Prints what a write with a filter did: each change as an NDJSON line,
  /// or for a dry run each pk that would change as a JSON string line; a
  /// note on stderr when nothing matched.
  func report(_ outcome: FilteredWriteResult, table: String) {
    guard case .filter(let expression, let dryRun, _) = self else { return }
    if outcome.matchedPKs.isEmpty {
      Output.error("folio: no document in table '\(table)' matches '\(expression)'; nothing changed")
      return
    }
    if dryRun {
      for pk in outcome.changedPKs { Output.print(JSONValue.string(pk).compactString) }
      Output.error(
        "folio: dry run: \(outcome.changedPKs.count) of \(outcome.matchedPKs.count) matching documents would change"
      )
      return
    }
    for result in outcome.allResults { Output.print(result.json.compactString) }
  }

  /// Names the filter's fields that no document of `table` holds, before
  /// anything is written (see ``QueryArguments/reportUnknownFields``).
  func checkFields(_ store: Store, table: String) throws {
    guard case .filter(let expression, _, let strict) = self else { return }
    let paths = try Predicate(parsing: expression, source: "--where").paths
    try QueryArguments.reportUnknownFields(store, table: table, named: [("--where", paths)], strict: strict)
  }
}
