/// The file formats `folio import` reads and `folio export` writes.
public enum TransferFormat: String, Sendable, CaseIterable {
  /// One JSON object per line.
  case ndjson
  /// One JSON array of objects.
  case json
  /// Comma-separated values with a header row (RFC 4180).
  case csv
  /// Tab-separated values with a header row.
  case tsv
  /// A table in an SQLite database file.
  case sqlite

  /// The format a file name's extension names, if any.
  public static func fromExtension(_ path: String) -> TransferFormat? {
    let lower = path.lowercased()
    let name = lower.split(separator: "/").last.map(String.init) ?? lower
    guard let dot = name.lastIndex(of: ".") else { return nil }
    switch name[name.index(after: dot)...] {
    case "ndjson", "jsonl", "ldjson": return .ndjson
    case "json": return .json
    case "csv": return .csv
    case "tsv", "tab": return .tsv
    case "sqlite", "sqlite3", "db": return .sqlite
    default: return nil
    }
  }

  /// The format the first bytes of a file suggest: the SQLite header, a
  /// `[` (JSON array), a `{` alone on its line (a pretty-printed JSON
  /// object keyed by pk, read as ``json``) or another `{` (NDJSON), else
  /// CSV (TSV if the first line has tabs and no commas).
  public static func sniff(_ head: [UInt8]) -> TransferFormat {
    if head.starts(with: Array("SQLite format 3\0".utf8)) { return .sqlite }
    var bytes = head[...]
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
    let blank: [UInt8] = [0x20, 0x09, 0x0A, 0x0D]
    guard let start = bytes.firstIndex(where: { !blank.contains($0) }) else { return .csv }
    let first = bytes[start]
    if first == UInt8(ascii: "[") { return .json }
    if first == UInt8(ascii: "{") {
      // An NDJSON line holds a whole object; a `{` with nothing after it on
      // its line opens one object spread over many lines.
      let rest = bytes[(start + 1)...].prefix { $0 != 0x0A }
      return rest.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D } ? .json : .ndjson
    }
    let line = bytes.prefix { $0 != 0x0A }
    if line.contains(0x09) && !line.contains(UInt8(ascii: ",")) { return .tsv }
    return .csv
  }
}

/// How an import treats a row whose pk is already in the table.
public enum ImportMode: String, Sendable, CaseIterable {
  /// The pk must be new; an existing pk is a bad row.
  case insert
  /// Create the document, or assign the row's columns over the existing
  /// one, leaving its other columns alone.
  case upsert
  /// Create the document, or deep-merge the row into it: objects merge key
  /// by key at every level, anything else is replaced.
  case merge
  /// Create the document, or replace it whole with the row.
  case replace
}

/// Options for ``Store/importRows(into:options:onBadRow:onProgress:)-8emd0``.
public struct ImportOptions: Sendable {
  /// Where the rows come from: a file path or `-` for stdin.
  public var path: String
  /// The format; nil to guess from the extension, then the content.
  public var format: TransferFormat?
  /// For SQLite: the table to read (needed when the database has several).
  public var sqliteTable: String?
  /// What to do with existing pks.
  public var mode: ImportMode = .insert
  /// The column holding each row's pk; nil for the table's `key`.
  public var pkColumn: String?
  /// Infer CSV/TSV types (numbers, booleans, null); off leaves strings.
  public var detectTypes = true
  /// CSV/TSV field texts that mean null (`NA`, `\N`, `-`), matched exactly
  /// on unquoted fields, whether or not types are detected. An empty field
  /// is null already when types are detected; list `""` to make it null
  /// when they are not.
  public var nullValues: [String] = []
  /// Remember a CSV/TSV file's column order as the table's
  /// ``TableConfig/fields`` in `folio.yaml` (new columns are appended), so
  /// that a CSV/TSV export writes the columns as the file had them. The
  /// store that imported keeps the config it was opened with: open the
  /// store again to see the new list.
  public var rememberFields = true
  /// How many rows may be in flight at once: at most this many parsed
  /// documents wait for the staging writer thread (so memory is bounded by
  /// about `batchSize` × the row size), and the staged op log is flushed to
  /// its file every `batchSize` rows. It changes memory and speed only, never
  /// the result. Must be at least 1.
  public var batchSize = 2048
  /// Skip and count bad rows instead of stopping.
  public var continueOnError = false
  /// End with one git commit of the import.
  public var commit = true
  /// The commit message; a summary by default.
  public var message: String?
  /// The name used for the input in messages (default: the path).
  public var displayName: String?
  /// Asked between rows whether to stop (for Ctrl-C). Before the import's
  /// durability point a `true` stops it with `INTERRUPTED`, leaving the
  /// table as it was; after that point the import is finished regardless,
  /// so the store never holds half an import.
  public var shouldStop: (@Sendable () -> Bool)?

  /// Options to import `path`.
  public init(path: String) { self.path = path }
}

/// Where an import is, for a progress bar.
public struct ImportProgress: Sendable {
  /// Rows read so far.
  public var rows: Int
  /// Bytes (or, for SQLite, rows) read and the total, when known.
  public var done: Int
  /// See ``done``.
  public var total: Int?
  /// What the import is doing.
  public var phase: Phase

  /// The steps of an import, in order.
  public enum Phase: String, Sendable {
    /// Reading and staging rows (most of the time).
    case reading
    /// Moving the staged documents into the table.
    case landing
    /// Writing the git commit.
    case committing
  }
}

/// What an import did.
public struct ImportSummary: Sendable {
  /// Rows read (good and bad).
  public var rows = 0
  /// Documents created.
  public var created = 0
  /// Documents changed.
  public var updated = 0
  /// Rows that changed nothing.
  public var unchanged = 0
  /// Bad rows skipped (`--continue`).
  public var skipped = 0
  /// The commit made, if any.
  public var commit: String?
  /// The format read.
  public var format: TransferFormat = .ndjson
  /// The columns of the file's header row, in its order (CSV/TSV only).
  public var columns: [String]?
  /// The table's ``TableConfig/fields`` as written to `folio.yaml`, when
  /// the import changed them.
  public var fields: [String]?
}
