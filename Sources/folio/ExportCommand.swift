import Folio
import Foundation

struct ExportCommand: Command {
  static let name = "export"
  static let abstract = "Export a table as NDJSON, a JSON array, CSV/TSV or SQLite, in order."
  static let usage = """
    folio export TABLE [--format ndjson|json|csv|tsv|sqlite] [-o FILE] [--sqlite-table NAME]
                 [--order-by-key | --order-by-child COLUMN] [--start-at VALUE] [--end-at VALUE]
                 [--limit-to-first N | --limit-to-last N] [--columns a,b,c]
    """
  static let details = """
    ARGUMENTS:
      TABLE                   The table (from folio.yaml).

    OPTIONS:
      --format FORMAT         ndjson (default), json (one array), csv, tsv or sqlite. Without
                              it, -o FILE's extension decides.
      -o, --output FILE       Write to FILE (default: stdout; SQLite needs a file).
      --sqlite-table NAME     The SQLite table to create or replace (default: TABLE).
      --order-by-key          Order by pk.
      --order-by-child COL    Order by a column's value (null < false < true < numbers <
                              strings < arrays/objects), ties by pk.
                              Default: the table's first order key, else the pk.
      --start-at VALUE        Only rows whose order value is >= VALUE (JSON; a bare word is
                              taken as a string).
      --end-at VALUE          Only rows whose order value is <= VALUE.
      --limit-to-first N      The first N rows of that range.
      --limit-to-last N       The last N rows of that range.
      --columns a,b,c         The columns and their order (CSV/TSV/SQLite); for NDJSON and
                              JSON, keep only these.

    Rows are streamed with flat memory. CSV/TSV take their columns from --columns or from
    the union of columns seen; nested values are written as JSON text, null as an empty
    field, and strings that would read back as another type are quoted, so 'folio import'
    gives the same values back (nested values come back as strings). SQLite output creates
    or replaces the table, types columns from the data, makes the key the primary key and
    indexes the order keys; there booleans become 0/1 and nested values JSON text.
    A progress bar is shown on a terminal; a one-line summary goes to stderr.
    """

  var table: String
  var options = ExportOptions()

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(
      arguments,
      options: [
        "--format", "-o", "--output", "--sqlite-table", "--order-by-child", "--start-at", "--end-at",
        "--limit-to-first", "--limit-to-last", "--columns",
      ],
      flags: ["--order-by-key"])
    try parsed.expectPositionals(1...1)
    table = parsed.positionals[0]
    options.outputPath = parsed.value("-o") ?? parsed.value("--output")
    if let format = parsed.value("--format") {
      guard let value = TransferFormat(rawValue: format) else {
        throw UsageError("unknown format '\(format)'; use ndjson, json, csv, tsv or sqlite")
      }
      options.format = value
    } else if let path = options.outputPath, let value = TransferFormat.fromExtension(path) {
      options.format = value
    }
    if options.format == .sqlite && options.outputPath == nil {
      throw UsageError("--format sqlite needs -o FILE")
    }
    options.sqliteTable = parsed.value("--sqlite-table")
    options.orderByKey = parsed.flag("--order-by-key")
    options.orderByChild = parsed.value("--order-by-child")
    if options.orderByKey && options.orderByChild != nil {
      throw UsageError("give one of --order-by-key and --order-by-child, not both")
    }
    func value(_ text: String?) -> JSONValue? {
      guard let text else { return nil }
      return (try? JSONValue(parsing: text)) ?? .string(text)
    }
    options.startAt = value(parsed.value("--start-at"))
    options.endAt = value(parsed.value("--end-at"))
    for (name, keyPath) in [
      ("--limit-to-first", \ExportOptions.limitToFirst), ("--limit-to-last", \.limitToLast),
    ] {
      if let text = parsed.value(name) {
        guard let n = Int(text), n >= 0 else { throw UsageError("\(name) needs a non-negative integer") }
        options[keyPath: keyPath] = n
      }
    }
    if options.limitToFirst != nil && options.limitToLast != nil {
      throw UsageError("give one of --limit-to-first and --limit-to-last, not both")
    }
    options.columns = parsed.value("--columns").map { $0.split(separator: ",").map(String.init) }
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    let bar = ProgressBar(unit: "rows")
    let summary: ExportSummary
    do {
      summary = try store.exportRows(from: table, options: options) { done, total in
        bar.update(count: done, done: done, total: total, phase: "writing")
      }
    } catch {
      bar.finish()
      throw error
    }
    bar.finish()
    let seconds = bar.elapsed
    let target = options.outputPath.map { " to \($0)" } ?? ""
    Output.error(
      "exported \(summary.rows) row(s) from \(table) as \(options.format.rawValue)\(target)"
        + String(format: " (%.1f s)", seconds))
    return 0
  }
}
