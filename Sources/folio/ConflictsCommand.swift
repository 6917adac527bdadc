import Folio
import Glibc

struct ConflictsCommand: Command {
  static let name = "conflicts"
  static let abstract = "List values that concurrent assignments overwrote in merges, and settle them."
  static let usage =
    "folio conflicts [TABLE] [--json] | folio conflicts resolve TABLE PK PATH (--keep | --take-other | --value JSON)"
  static let details = """
    ARGUMENTS:
      TABLE    Only this table's conflicts.
      PK PATH  The document and field path (as 'folio conflicts' prints it) to settle.

    OPTIONS:
      --json          One JSON object per conflict (NDJSON); the default when piped.
      --keep          Keep the value that won the merge.
      --take-other    Take the value the merge overwrote.
      --value JSON    Set a new value (null sets null; use 'folio apply' to unset).

    A conflict is a value that a replica assigned while another replica, without
    having seen it, assigned the same path later: the later stamp won, and the
    earlier value is listed here. Counters and sets never conflict (their merge
    loses nothing), and neither does a remove that beats an update ('folio log'
    shows both ops). Settling writes a normal op, which syncs and closes the
    conflict on every replica; so does any later assignment to the path.
    """

  enum Mode {
    case list(table: String?, json: Bool)
    case resolve(table: String, pk: String, path: String, resolution: Store.ConflictResolution)
  }

  var mode: Mode

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(
      arguments, options: ["--value"], flags: ["--json", "--keep", "--take-other"])
    if parsed.positionals.first == "resolve" {
      try parsed.expectPositionals(4...4)
      let p = parsed.positionals
      let choices = [parsed.flag("--keep"), parsed.flag("--take-other"), parsed.value("--value") != nil]
      guard choices.filter({ $0 }).count == 1 else {
        throw UsageError("give exactly one of --keep, --take-other and --value")
      }
      let resolution: Store.ConflictResolution
      if parsed.flag("--keep") {
        resolution = .keep
      } else if parsed.flag("--take-other") {
        resolution = .takeOther
      } else {
        resolution = .value(try parseJSON(parsed.value("--value")!, source: "--value"))
      }
      mode = .resolve(table: p[1], pk: p[2], path: p[3], resolution: resolution)
    } else {
      guard !parsed.flag("--keep"), !parsed.flag("--take-other"), parsed.value("--value") == nil else {
        throw UsageError("--keep, --take-other and --value go with 'folio conflicts resolve'")
      }
      try parsed.expectPositionals(0...1)
      mode = .list(table: parsed.positionals.first, json: parsed.flag("--json"))
    }
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    switch mode {
    case .resolve(let table, let pk, let path, let resolution):
      for result in try store.resolveConflict(table: table, pk: pk, path: FieldPath(path), resolution) {
        Output.print(result.json.compactString)
      }
    case .list(let table, let json):
      if let table { _ = try store.table(named: table) }
      let conflicts = try store.conflicts(table: table)
      if json || isatty(STDOUT_FILENO) == 0 {
        for conflict in conflicts { Output.print(conflict.json.compactString) }
        return 0
      }
      if conflicts.isEmpty {
        Output.print("no conflicts")
        return 0
      }
      let rows =
        [["TABLE", "PK", "PATH", "KEPT", "LOST"]]
        + conflicts.map { c in
          [
            c.table, c.pk, c.path.description,
            (c.winningValue?.compactString ?? "(unset)") + " @" + c.winningReplica,
            c.losingValue.compactString + " @" + c.losingReplica,
          ]
        }
      let widths = (0..<5).map { column in rows.map { $0[column].displayWidth }.max()! }
      for row in rows {
        let cells = row.enumerated().map { i, cell in
          i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.displayWidth)
        }
        Output.print(cells.joined(separator: "  "))
      }
    }
    return 0
  }
}
