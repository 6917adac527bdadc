import FolioCore
import FolioGit
import FolioJSON
import FolioQuery
import FolioSystem
import Glibc

/// Batch transfer: imports by ``Importer`` and exports by ``Exporter``.
extension Store {
  /// ``importRows(into:options:onBadRow:onProgress:)``, run on the store's
  /// executor. The callbacks run there too.
  ///
  /// ```swift
  /// let options = ImportOptions(path: "flights.ndjson")
  /// try await store.importRows(into: "flights", options: options)
  /// ```
  @discardableResult
  public func importRows(
    into tableName: String, options: ImportOptions,
    onBadRow: @escaping @Sendable (FolioError) -> Void = { _ in },
    onProgress: @escaping @Sendable (ImportProgress) -> Void = { _ in }
  ) async throws -> ImportSummary {
    try await perform {
      try self.importRows(into: tableName, options: options, onBadRow: onBadRow, onProgress: onProgress)
    }
  }

  /// Imports rows from an NDJSON, JSON-array, CSV/TSV or SQLite file into
  /// `table`, all or nothing, and (unless told not to) commits them to git
  /// as one commit whose objects are written as one pack.
  ///
  /// ```swift
  /// var options = ImportOptions(path: "flights.csv")
  /// options.mode = .upsert
  /// let summary = try store.importRows(into: "flights", options: options)
  /// ```
  ///
  /// Rows are streamed: memory stays flat however big the input. Each row
  /// becomes a document whose pk is its `pkColumn` value (the table's `key`
  /// by default), or, for a JSON object keyed by pk (`{"id1": {...}}`, the
  /// Firebase export shape), the member's key; a row without one gets a
  /// generated pk (26 characters like ``PrimaryKey/generate()``'s, unique
  /// across replicas, made from the store's clock so that they sort in
  /// file order, also across imports), which is also written into the key
  /// column. A CSV/TSV file's columns are merged into the table's
  /// ``TableConfig/fields`` in `folio.yaml` (``ImportOptions/rememberFields``)
  /// and committed with the import.
  /// A table that keeps its pk in the file name only (`key: null`) reads
  /// the pk from `pkColumn`, else ``TableConfig/nameKeyColumn``,
  /// and leaves that column out of the document, so what `folio export`
  /// wrote imports back as it was.
  ///
  /// The op log gets one compact line per document changed, with no body
  /// (``Op/fromTree``). Nothing touches the table until every row has been
  /// read: a bad row without `continueOnError`, an error, or a kill leaves
  /// the table as it was; after the single durability point a crash is
  /// finished by the next process that opens the store.
  ///
  /// Rows are read, checked against the schema and the size limit, and
  /// staged without the store lock, so other writers go on meanwhile; the
  /// lock is taken only to land. If another writer changed a document the
  /// import read while it was staging, the import stages again under the
  /// lock from the same input (kept for the purpose when it is stdin or a
  /// pipe), so neither write is lost. Imports into one store take turns.
  ///
  /// - Parameters:
  ///   - onBadRow: called for each bad row skipped with `continueOnError`
  ///     (once per row, even when the import stages twice).
  ///   - onProgress: called every few hundred rows and at each phase.
  /// - Throws: the first bad row (`FILE:LINE:COL: error: …`) unless
  ///   `continueOnError`; `USAGE` for a `batchSize` below 1; `UNKNOWN_TABLE`;
  ///   I/O and git errors.
  @discardableResult
  public func importRows(
    into tableName: String, options: ImportOptions, onBadRow: (FolioError) -> Void = { _ in },
    onProgress: (ImportProgress) -> Void = { _ in }
  ) throws -> ImportSummary {
    try Importer(store: self).importRows(
      into: tableName, options: options, onBadRow: onBadRow, onProgress: onProgress)
  }

  /// Writes a table's documents out, streamed, in order: by the table's
  /// first order key, else by pk. Shorthand for ``exportRows(_:options:onProgress:)-52wgj``
  /// with the table's plain query.
  @discardableResult
  public func exportRows(
    from tableName: String, options: ExportOptions, onProgress: (Int, Int?) -> Void = { _, _ in }
  ) throws -> ExportSummary {
    try exportRows(collection(tableName).query(), options: options, onProgress: onProgress)
  }

  /// Writes the documents `query` returns, streamed, in the query's order
  /// (by default the table's first order key, else the pk), with its range,
  /// limit and filter applied.
  ///
  /// ```swift
  /// var options = ExportOptions()
  /// options.format = .csv
  /// options.outputPath = "late.csv"
  /// let late = try store.collection("flights").query()
  ///     .orderBy(child: "dep_delay").startAt(60).where("carrier == \"AA\"")
  /// try store.exportRows(late, options: options)
  /// ```
  ///
  /// Documents are read one at a time through the query's cursor, so memory
  /// stays flat however large the table. CSV/TSV take their columns from
  /// `columns`, or from the union of the columns seen (key column first,
  /// then by name), which costs one more pass of the query. SQLite output
  /// also takes one more pass, to give each column a type. Types that change
  /// on a round trip: CSV/TSV bring nested values back as JSON-text strings;
  /// SQLite turns booleans into 0/1, nested values into JSON text and
  /// decimals into REALs.
  /// - Parameter onProgress: rows written, and the total when it is known
  ///   without reading documents.
  /// - Throws: `UNKNOWN_TABLE`, `INVALID_JSON` for a document that does not
  ///   parse, I/O and SQLite errors. A failed export leaves no file behind.
  @discardableResult
  public func exportRows(
    _ query: Query, options: ExportOptions, onProgress: (Int, Int?) -> Void = { _, _ in }
  ) throws -> ExportSummary {
    try Exporter(store: self).export(query, snapshot: nil, options: options, onProgress: onProgress)
  }

  /// Writes what `query` returns at a past commit (``StoreSnapshot``) to a
  /// file or stdout, as ``exportRows(_:options:onProgress:)-52wgj`` does
  /// for the working tree. The documents are read from git's objects; the
  /// total is not known ahead.
  @discardableResult
  public func exportRows(
    _ query: Query, asOf snapshot: StoreSnapshot, options: ExportOptions,
    onProgress: (Int, Int?) -> Void = { _, _ in }
  ) throws -> ExportSummary {
    try Exporter(store: self).export(query, snapshot: snapshot, options: options, onProgress: onProgress)
  }

  /// ``exportRows(from:options:onProgress:)``, run on the store's executor.
  @discardableResult
  public func exportRows(
    from tableName: String, options: ExportOptions,
    onProgress: @escaping @Sendable (Int, Int?) -> Void = { _, _ in }
  ) async throws -> ExportSummary {
    try await perform { try self.exportRows(from: tableName, options: options, onProgress: onProgress) }
  }

  /// ``exportRows(_:options:onProgress:)``, run on the store's executor.
  ///
  /// ```swift
  /// var options = ExportOptions()
  /// options.outputPath = "open.ndjson"
  /// try await store.exportRows(todos.query().where("done == false"), options: options)
  /// ```
  @discardableResult
  public func exportRows(
    _ query: Query, options: ExportOptions, onProgress: @escaping @Sendable (Int, Int?) -> Void = { _, _ in }
  ) async throws -> ExportSummary {
    try await perform { try self.exportRows(query, options: options, onProgress: onProgress) }
  }
}
