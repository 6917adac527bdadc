import Folio
import Foundation

struct ImportCommand: Command {
  static let name = "import"
  static let abstract = "Import rows from NDJSON, a JSON array, CSV/TSV or SQLite into a table."
  static let usage = """
    folio import TABLE FILE|- [--format ndjson|json|csv|tsv|sqlite] [--sqlite-table NAME]
                 [--mode insert|upsert|merge|replace] [--pk COLUMN] [--no-detect-types]
                 [--null VALUE]… [--batch-size N] [--continue] [--no-commit] [-m MESSAGE] [--json]
                 [--create [--order A[,B…]] [--key-in-name] [--layout nested|hashed|flat]]
    """
  static let details = """
    ARGUMENTS:
      TABLE                 The table (from folio.yaml; see --create).
      FILE                  The input file, or - for stdin.

    OPTIONS:
      --format FORMAT       ndjson, json (one array, or one object keyed by pk), csv, tsv or
                            sqlite. Default: from the file's extension, else from its first
                            bytes (a '{' alone on the first line is a keyed object).
      --sqlite-table NAME   The SQLite table to read (needed when there are several).
      --mode MODE           What an existing pk means (default: insert):
                              insert   the pk must be new; an existing one is a bad row
                              upsert   create, or set the row's columns, keeping the others
                              merge    create, or deep-merge the row (objects key by key)
                              replace  create, or replace the whole document
      --pk COLUMN           The column holding each row's pk (default: the table's key).
                            A row with no pk gets a generated one: 26 characters, sortable
                            by creation time, unique across replicas; it is also written
                            into the column. A table that keeps its pk in the file name
                            (key: null) reads it from --pk or _key, and leaves that column
                            out of the document.
      --no-detect-types     CSV/TSV: keep every field a string. By default an unquoted
                            field that is an integer or decimal becomes a number (its text
                            kept exactly), true/false a boolean, and an empty one null;
                            quoted fields always stay strings. Numbers keep their text
                            (1.50 stays 1.50); 007 or +1 are not JSON numbers: strings.
      --null VALUE          CSV/TSV: an unquoted field equal to VALUE is null (repeatable:
                            --null NA --null '\\N'). An empty field is null already when types
                            are detected; --null '' makes it null with --no-detect-types.
      --batch-size N        Rows in flight (default: 2048): at most N parsed rows wait for
                            the thread that writes the staged files, so memory stays
                            under about N times the row size, and the staged op log is
                            flushed every N rows. Changes memory and speed, not the result.
      --continue            Skip bad rows (reported and counted) instead of stopping.
      --no-commit           Leave the import uncommitted (commit later with 'folio commit').
      -m, --message MSG     The commit message.
      --json                Print the summary as one JSON object.
      --create              Add TABLE to folio.yaml first if it is missing (folder
                            data/TABLE, key --pk or id), and print what was added.
      --order A[,B…]        With --create: the new table's order keys.
      --key-in-name         With --create: keep the pk in the file name only (key: null).
      --layout L            With --create: nested (default; files in 4,096 folders two
                            levels down, so a small change stays small as the table
                            grows), hashed (256 folders) or flat.

    A JSON file that is one object whose values are all objects, the shape of a Firebase
    export ({"id1": {...}, "id2": {...}}), imports one document per member, the member's key
    as its pk (in the key column, or the file name with key: null); a member whose value is
    not an object is a bad row. It is streamed like an array.

    A CSV/TSV import remembers the file's columns, in order, as the table's 'fields:' in
    folio.yaml (new columns are appended), so that 'folio export --format csv' writes them
    back as they were. Generated pks sort in file order (also across imports from one
    replica), so an export by pk keeps the file's row order.

    Input is streamed: memory stays flat however big the file. A bad row (malformed JSON,
    a ragged CSV row, a non-object, an unsafe pk, an existing or repeated pk in insert mode)
    is reported as FILE:LINE:COL: error: ... Without --continue the import then stops and
    the table is left exactly as it was. An interrupted import (Ctrl-C, kill -9) also leaves
    the table as it was, or, past its durability point, is finished (Ctrl-C) or finished
    when the store is next opened (kill -9); running it again completes it. An import stopped
    by Ctrl-C exits 130. Each imported row is logged as a compact op, without its body.
    Unless --no-commit, the import ends with one git commit, written as one pack, and git's
    index is updated so 'git status' is clean. A progress bar is shown on a terminal.
    """

  var table: String
  var options: ImportOptions
  var json: Bool
  var create: Bool
  var order: [String]?
  var keyInName: Bool
  var layout: TableLayout

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(
      arguments,
      options: [
        "--format", "--sqlite-table", "--mode", "--pk", "--batch-size", "-m", "--message", "--order",
        "--null", "--layout",
      ],
      flags: ["--no-detect-types", "--continue", "--no-commit", "--json", "--create", "--key-in-name"],
      repeatable: ["--null"])
    try parsed.expectPositionals(2...2)
    table = parsed.positionals[0]
    options = ImportOptions(path: parsed.positionals[1])
    if let format = parsed.value("--format") {
      guard let value = TransferFormat(rawValue: format) else {
        throw UsageError("unknown format '\(format)'; use ndjson, json, csv, tsv or sqlite")
      }
      options.format = value
    }
    if let mode = parsed.value("--mode") {
      guard let value = ImportMode(rawValue: mode) else {
        throw UsageError("unknown mode '\(mode)'; use insert, upsert, merge or replace")
      }
      options.mode = value
    }
    if let size = parsed.value("--batch-size") {
      guard let value = Int(size), value > 0 else {
        throw UsageError("--batch-size needs a positive integer")
      }
      options.batchSize = value
    }
    options.sqliteTable = parsed.value("--sqlite-table")
    options.pkColumn = parsed.value("--pk")
    options.detectTypes = !parsed.flag("--no-detect-types")
    options.nullValues = parsed.allValues("--null")
    options.continueOnError = parsed.flag("--continue")
    options.commit = !parsed.flag("--no-commit")
    options.message = parsed.value("-m") ?? parsed.value("--message")
    json = parsed.flag("--json")
    create = parsed.flag("--create")
    order = parsed.value("--order").map {
      $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }
    if order != nil && !create { throw UsageError("--order applies only with --create") }
    keyInName = parsed.flag("--key-in-name")
    layout = try parsed.layout()
    if keyInName && !create { throw UsageError("--key-in-name applies only with --create") }
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    guard store.config.table(named: table) == nil else { return try run(on: store, in: context) }
    guard create else {
      Output.error(
        store.config.unknownTableError(table).commandLineText
          + "\nOr create it as you import: folio import \(shellWord(table)) \(shellWord(options.path)) --create"
      )
      return 1
    }
    // The key: --pk, else `id`, which holds the file's own ids if it has
    // an `id` column, or the generated pks if not; or none with
    // --key-in-name. A failed import takes the table back out.
    let added = TableConfig(
      name: table, path: "data/" + table, key: keyInName ? nil : options.pkColumn ?? "id", order: order ?? [],
      layout: layout)
    do {
      return try store.withTableAdded(added) { store, entry in
        Output.error("created table '\(table)' in \(Config.fileName):\n" + entry, terminator: "")
        let status = try run(on: store, in: context)
        if status == 130 { throw Interrupted() }
        return status
      }
    } catch is Interrupted {
      Output.error("the table '\(table)' was not added: nothing was imported")
      return 130
    } catch {
      Output.error("the table '\(table)' was not added: nothing was imported")
      throw error
    }
  }

  /// An import stopped by Ctrl-C before anything landed, already reported.
  private struct Interrupted: Error {}

  private func run(on store: Store, in context: CommandContext) throws -> Int32 {
    var options = self.options
    if options.path != "-" {
      options.displayName = options.path
      options.path = URL(fileURLWithPath: options.path, relativeTo: context.directory).path
    }
    // Ctrl-C stops the import at the next row while nothing has landed; past
    // the durability point the import finishes. A second Ctrl-C ends the
    // process at once, which is as safe as kill -9: the next open finishes
    // or discards what was under way.
    let interrupted = InterruptFlag()
    // Not restarting calls: an import waiting for input (a FIFO no writer
    // opens, a pipe that sends nothing) must see the signal, and stop.
    _ = try InterruptSignals(restartingCalls: false) {
      interrupted.set()
      signal(SIGINT, SIG_DFL)
      signal(SIGTERM, SIG_DFL)
      Output.error("interrupted: stopping the import (Ctrl-C again to stop at once)")
    }
    options.shouldStop = { interrupted.isSet || InterruptSignals.hasArrived }
    let bar = ProgressBar(unit: "rows")
    let summary: ImportSummary
    do {
      summary = try store.importRows(
        into: table, options: options,
        onBadRow: { error in
          bar.finish()
          Output.error(error.headline + " (skipped)")
        },
        onProgress: { progress in
          bar.update(
            count: progress.rows, done: progress.done, total: progress.total, phase: progress.phase.rawValue,
            force: progress.phase != .reading)
        })
    } catch let error as FolioError where error.code == .interrupted {
      bar.finish()
      Output.error(error.commandLineText)
      return 130
    } catch {
      bar.finish()
      throw error
    }
    bar.finish()
    if !options.nullValues.isEmpty && summary.format != .csv && summary.format != .tsv {
      Output.error(
        "warning: --null applies to CSV/TSV input; \(self.options.path) was read as \(summary.format.rawValue)"
      )
    }
    if interrupted.isSet {
      Output.error("warning: the interrupt came after the import's durability point, so it was finished")
    }
    let seconds = bar.elapsed
    if json {
      let object: JSONObject = [
        "table": .string(table), "format": .string(summary.format.rawValue),
        "rows": .integer(summary.rows), "created": .integer(summary.created),
        "updated": .integer(summary.updated), "unchanged": .integer(summary.unchanged),
        "skipped": .integer(summary.skipped), "commit": summary.commit.map(JSONValue.string) ?? .null,
        "seconds": .number(String(format: "%.3f", seconds)),
      ]
      Output.print(JSONValue.object(object).compactString)
    } else {
      var line =
        "imported \(summary.rows) row(s) into \(table): \(summary.created) created, \(summary.updated) updated, "
        + "\(summary.unchanged) unchanged, \(summary.skipped) skipped"
      if let commit = summary.commit { line += "; commit \(commit.prefix(12))" }
      line += String(format: " (%.1f s, %.0f rows/s)", seconds, Double(summary.rows) / max(seconds, 0.001))
      Output.print(line)
    }
    return 0
  }
}
