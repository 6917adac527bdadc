import Folio
import Foundation

struct ExportCommand: Command {
  static let name = "export"
  static let abstract = "Export a table as NDJSON, a JSON array, CSV/TSV or SQLite, in order."
  static let usage = """
    folio export TABLE [--format ndjson|json|csv|tsv|sqlite] [-o FILE] [--sqlite-table NAME]
                 [--order-by-child PATH | --order-by-key | --order-by-value]
                 [--start-at V] [--start-after V] [--end-at V] [--end-before V] [--equal-to V]
                 [--start-key K] [--end-key K] [--limit-to-first N | --limit-to-last N]
                 [--where EXPR] [--columns|--select a,b.c,`d e`] [--pk COLUMN]
                 [--null VALUE]… [--crlf] [--with-key]
    """
  static let details = """
    ARGUMENTS:
      TABLE                   The table (from folio.yaml).

    OPTIONS:
      --format FORMAT         ndjson (default), json (one array), csv, tsv or sqlite. Without
                              it, -o FILE's extension decides.
      -o, --output FILE       Write to FILE (default: stdout; SQLite needs a file).
      --sqlite-table NAME     The SQLite table to create or replace (default: TABLE).
      --columns a,b.c,`d e`   The columns and their order (CSV/TSV/SQLite); for NDJSON and
                              JSON, keep only these. A dotted path names a nested value; a
                              name in backticks is one segment, dots, spaces and commas
                              included. A field that no document of the table has is an
                              error (exit 64) naming the nearest one. SQLite always gets
                              the key column (added first if left out), as its primary key.
      --select a,b.c          The same as --columns.
      --null VALUE            CSV/TSV: write null (and a missing value) as VALUE instead of
                              an empty field; a string equal to VALUE is quoted. Repeatable,
                              as in import: the first is written, all are quoted.
      --crlf                  CSV/TSV: end lines with CRLF (default: LF).
      --with-key              CSV/TSV: also write the key column, first, when the table's
                              fields (the columns of the file it was imported from) leave
                              it out because its pks were generated.
      --pk COLUMN             For a table that keeps its pk in the file name (key: null):
                              the column that carries the pk in each row (default: _key).

    The query options are those of 'folio query':

    \(QueryArguments.details)

    Rows are streamed in order with flat memory: by the table's first order key unless told
    otherwise, else by pk. CSV/TSV take their columns from --columns, else from the table's
    'fields:' in folio.yaml (written by a CSV/TSV import: the file's columns in its order),
    then the other columns seen, by name; a table without 'fields:' gets its key column,
    then the rest by name. So a plain CSV file (RFC 4180, LF, a header row) imported with
    --create comes back byte for byte from 'folio export TABLE --format csv' (give both the
    same --null). Nested values are written as JSON text, null as an empty field (or the
    first --null), and strings that would read back as another type are quoted, so
    'folio import' gives the same values back (nested values come back as strings).
    SQLite output creates or replaces the table, types columns from the data, makes the key
    the primary key and indexes the order keys; there booleans become 0/1 and nested values
    JSON text.
    A progress bar is shown on a terminal; a one-line summary goes to stderr.
    A document file that does not parse is left out and named on stderr as
    'path:line:col: warning: left out: …'; the exit status is then 3 (as for query, status
    and commit).
    """

  var table: String
  var query: QueryArguments
  var options = ExportOptions()

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(
      arguments,
      options: QueryArguments.options.union([
        "--format", "-o", "--output", "--sqlite-table", "--columns", "--select", "--pk", "--null",
      ]),
      flags: QueryArguments.flags.union(["--crlf", "--with-key"]), repeatable: ["--null"])
    try parsed.expectPositionals(1...1)
    table = parsed.positionals[0]
    query = try QueryArguments(parsed)
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
    options.pkColumn = parsed.value("--pk")
    let columns = parsed.value("--columns")
    let select = parsed.value("--select")
    if columns != nil && select != nil { throw UsageError("give --columns or --select, not both") }
    if let text = columns ?? select {
      let source = columns != nil ? "--columns" : "--select"
      do {
        options.columnPaths = try FieldPath.list(parsing: text, source: source)
      } catch let error as FolioError {
        throw UsageError((error.location.map { "\($0): " } ?? "") + error.message)
      }
    }
    options.nullValues = parsed.allValues("--null")
    options.crlf = parsed.flag("--crlf")
    options.includeKey = parsed.flag("--with-key")
    if options.format != .csv && options.format != .tsv {
      // Options that would change nothing are a mistake in the command line.
      if let csvOnly = [
        ("--null", !options.nullValues.isEmpty), ("--crlf", options.crlf), ("--with-key", options.includeKey),
      ].first(where: \.1) {
        throw UsageError("\(csvOnly.0) applies to --format csv or tsv, not \(options.format.rawValue)")
      }
    }
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    let snapshot = try query.snapshot(store)
    // A full stat check of a large table starts a daemon for the next query.
    if snapshot == nil { store.startIndexDaemonOnDemand(executable: Executable.path) }
    let query = try self.query.makeQuery(store, table: table)
    // The filter's and the ordering's fields; the columns' own check is the
    // export's (an unknown column is an error there).
    try self.query.checkFields(store, table: table)
    let bar = ProgressBar(unit: "rows")
    let summary: ExportSummary
    do {
      let progress = { (done: Int, total: Int?) in
        bar.update(count: done, done: done, total: total, phase: "writing")
      }
      if let snapshot {
        summary = try store.exportRows(query, asOf: snapshot, options: options, onProgress: progress)
      } else {
        summary = try store.exportRows(query, options: options, onProgress: progress)
      }
    } catch let error as FolioError where error.code == .usage {
      // A column no document has is a mistake on the command line.
      bar.finish()
      return usageError(error.message, usage: Self.usage, command: Self.name)
    } catch {
      bar.finish()
      throw error
    }
    bar.finish()
    let seconds = bar.elapsed
    let target = options.outputPath.map { " to \($0)" } ?? ""
    Output.error(
      "exported \(summary.rows) row(s) from \(table) as \(options.format.rawValue)\(target)"
        + String(format: " (%.1f s)", seconds)
        + (summary.skipped.isEmpty ? "" : "; left out \(summary.skipped.count) file(s) that do not parse"))
    return LeftOutFiles.report(summary.skipped)
  }
}
