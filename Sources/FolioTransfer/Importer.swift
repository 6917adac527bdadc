import FolioCore
import FolioGit
import FolioJSON
import FolioQuery
import FolioSystem
import Glibc

/// Imports rows into a table: stages them in a private folder
/// (``ImportWorkspace``) without the store lock, then lands them all at
/// once with the lock held, writing git's objects directly
/// (``importedFolderTree(head:names:ids:order:pack:repository:table:)``)
/// and an op per row.
struct Importer {
  /// The store imported into.
  let store: Store

  func importRows(
    into tableName: String, options: ImportOptions, onBadRow: (FolioError) -> Void = { _ in },
    onProgress: (ImportProgress) -> Void = { _ in }
  ) throws -> ImportSummary {
    guard options.batchSize >= 1 else {
      throw FolioError(.usage, "the batch size must be at least 1, not \(options.batchSize)")
    }
    let table = try store.table(named: tableName)
    if let missing = table.missingSchemaError { throw missing }
    // A record's text is at most about its document's size: twice the
    // limit leaves room for whitespace, and bounds what one record costs.
    let recordLimit = 2 * store.config.limits.documentBytes
    return try store.importLock.withLock {
      // An import a crash left past its durability point lands before the
      // staging folder is used again.
      if ImportWorkspace.isPending(privateDirectory: store.privateDirectory) {
        try store.lock.withLock { try store.recoverBeforeWrite() }
      }
      let workspace = ImportWorkspace(privateDirectory: store.privateDirectory)
      try workspace.prepare()
      let copy = try workspace.inputCopy(for: options.path)
      defer { if let copy { close(copy.fd) } }
      var staged: StagedImport
      let format: TransferFormat
      do {
        let reader: any RowReader
        (reader, format) = try Self.makeReader(options, copy: copy, recordLimit: recordLimit)
        staged = try stage(
          reader, into: table, workspace: workspace, options: options, onBadRow: onBadRow,
          onProgress: onProgress)
      } catch {
        try? workspace.discard()
        throw error
      }
      return try store.lock.withLock {
        do {
          try store.recoverBeforeWrite()
          // The file's column order goes into folio.yaml before the commit
          // below, which takes it with anything else pending, so that a
          // committed import leaves nothing to commit.
          if options.rememberFields, let columns = staged.summary.columns {
            staged.summary.fields = try store.mergeFieldsLocked(columns, ofTable: table.name)
          }
          if options.commit {
            // Anything pending goes in first, on its own, so the import's
            // commit holds the import and nothing else.
            _ = try CommitWriter(store: store).commitLocked(message: "folio: pending changes before import")
          }
          if try !staged.manifest.isCurrent(tableDirectory: store.directory(of: table)) {
            // Another writer changed a document this import read: stage
            // again, now under the lock, so that both writes count.
            staged.manifest.pack?.discard()
            try workspace.restart()
            var again = options
            again.path = copy?.path ?? options.path
            again.displayName = staged.inputName
            again.format = format
            let (reader, _) = try Self.makeReader(again, copy: nil, recordLimit: recordLimit)
            staged = try stage(
              reader, into: table, workspace: workspace, options: again, onBadRow: { _ in },
              onProgress: onProgress)
          } else if try store.clock.lastHLC() != staged.clock {
            // Other writes landed meanwhile: the import's op lines take
            // stamps after theirs, so the log stays in clock order.
            try restampOps(workspace.opsPath, table: table)
          }
        } catch {
          staged.manifest.pack?.discard()
          try? workspace.discard()
          throw error
        }
        staged.summary.format = format
        return try land(staged, into: table, workspace: workspace, options: options, onProgress: onProgress)
      }
    }
  }

  /// What staging produced: the documents and op lines in the workspace.
  private struct StagedImport {
    var manifest: ImportManifest
    var summary: ImportSummary
    /// The store's clock when staging began; the op lines follow it.
    var clock: HLC?
    /// The input's name, for messages.
    var inputName: String
    /// The table's packed cache, from a first import's documents.
    var recorder: ImportPackRecorder?
  }

  /// Lands staged documents and commits them. Call with the lock held.
  private func land(
    _ staged: StagedImport, into table: TableConfig, workspace: ImportWorkspace, options: ImportOptions,
    onProgress: (ImportProgress) -> Void
  ) throws -> ImportSummary {
    var summary = staged.summary
    let manifest = staged.manifest
    let tableDirectory = store.directory(of: table)
    if summary.created + summary.updated == 0 {
      manifest.pack?.discard()
      try workspace.discard()
      return summary
    }
    // The pack holds every document now: its checksum and `.idx` are
    // made on another thread while the import lands and commits.
    manifest.pack?.finishInBackground(packFolder: store.gitDirectory + "/objects/pack")
    do {
      onProgress(ImportProgress(rows: summary.rows, done: 1, total: 1, phase: .landing))
      let stillEmpty = manifest.tableWasEmpty ? try FileSystem.isEmptyDirectory(tableDirectory) : false
      let record = ImportWorkspace.Record(
        tableDirectory: tableDirectory, logPath: store.opLogPath,
        logOffset: try OpLog.size(of: store.opLogPath),
        opsSize: try Self.fileSize(workspace.opsPath),
        wholeFolder: stillEmpty)
      try workspace.seal(record, root: store.rootPath)
      // One event for live queries in other processes (TransactionMarker).
      let landedWhole = try TransactionMarker.around(privateDirectory: store.privateDirectory) {
        try workspace.land(record, root: store.rootPath)
      }
      staged.recorder?.finish(landedWhole: landedWhole)
      store.clock.reset()
      try forgetEvictions(table: table)
      if let pack = manifest.pack {
        onProgress(ImportProgress(rows: summary.rows, done: 1, total: 1, phase: .committing))
        let message =
          options.message
          ?? "folio import: \(summary.created) created, \(summary.updated) updated in \(table.name)"
        summary.commit = try commitImport(table: table, manifest: manifest, pack: pack, message: message)?
          .description
      }
    } catch {
      // Waits for the finishing thread; keeps the pack if it was stored.
      manifest.pack?.discard()
      throw error
    }
    return summary
  }

  /// Gives the staged op lines new stamps, after the store's clock now.
  /// Call with the lock held.
  private func restampOps(_ opsPath: String, table: TableConfig) throws {
    let reader = NDJSONReader(stream: try ByteStream(path: opsPath))
    let newPath = opsPath + ".new"
    let out = try FileSystem.syscall("open", path: newPath) {
      open(newPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
    }
    defer { close(out) }
    var last = try store.clock.lastHLC()
    var bytes: [UInt8] = []
    while let event = try reader.next() {
      guard case .row(let value, _) = event else {
        throw FolioError(.io, "the import's staged op lines are damaged", path: store.relative(opsPath))
      }
      var op = try Op(json: value)
      last = HLC.next(after: last, now: SystemClock.nowMilliseconds(), replica: store.replicaID)
      op.hlc = last!
      op.appendLogLine(to: &bytes)
      if bytes.count >= 1 << 20 {
        try FileSystem.writeAll(out, bytes, path: newPath)
        bytes.removeAll(keepingCapacity: true)
      }
    }
    try FileSystem.writeAll(out, bytes, path: newPath)
    try FileSystem.syscall("rename", path: opsPath) { rename(newPath, opsPath) }
  }

  /// The reader for `options`' input, and its format. With `copy`, every
  /// byte read is also written there (input that can be read only once).
  static func makeReader(
    _ options: ImportOptions, copy: (fd: Int32, path: String)? = nil, recordLimit: Int? = nil
  ) throws -> (
    any RowReader, TransferFormat
  ) {
    var format = options.format ?? TransferFormat.fromExtension(options.path)
    if format == .sqlite || (format == nil && options.path != "-" && Self.hasSQLiteHeader(options.path)) {
      return (try SQLiteReader(path: options.path, table: options.sqliteTable), .sqlite)
    }
    let stream = try ByteStream(
      path: options.path, displayName: options.displayName, shouldStop: options.shouldStop)
    stream.copy = copy
    stream.recordLimit = recordLimit
    if format == nil {
      try stream.fill()
      format = TransferFormat.sniff(Array(stream.buffer[stream.start..<min(stream.end, 4096)]))
    }
    switch format! {
    case .ndjson: return (NDJSONReader(stream: stream), .ndjson)
    case .json: return (JSONArrayReader(stream: stream), .json)
    case .csv:
      return (
        CSVReader(
          stream: stream, separator: UInt8(ascii: ","), detectTypes: options.detectTypes,
          nullValues: options.nullValues), .csv
      )
    case .tsv:
      return (
        CSVReader(
          stream: stream, separator: 0x09, detectTypes: options.detectTypes, nullValues: options.nullValues),
        .tsv
      )
    case .sqlite:
      throw FolioError(.usage, "SQLite input must be a file, not stdin", path: options.path)
    }
  }

  private static func hasSQLiteHeader(_ path: String) -> Bool {
    // A pipe's bytes can be read only once, and opening a FIFO to look
    // would take its writer from the reader that follows; SQLite needs a
    // file anyway.
    guard FileSystem.isRegularFile(path) else { return false }
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var head = [UInt8](repeating: 0, count: 16)
    let n = head.withUnsafeMutableBytes { read(fd, $0.baseAddress, 16) }
    return n == 16 && head == Array("SQLite format 3\0".utf8)
  }

  /// Reads every row and writes each resulting document into the staging
  /// folder, with its op line. The table is not touched.
  private func stage(
    _ reader: any RowReader, into table: TableConfig, workspace: ImportWorkspace, options: ImportOptions,
    onBadRow: (FolioError) -> Void, onProgress: (ImportProgress) -> Void
  ) throws -> StagedImport {
    var summary = ImportSummary()
    let keyColumn = options.pkColumn ?? table.rowKey()
    let tableDirectory = store.directory(of: table)
    let manifest = ImportManifest(
      tableWasEmpty: try FileSystem.isEmptyDirectory(tableDirectory),
      pack: options.commit ? try GitPackFile(path: workspace.packPath) : nil)
    var staged = false
    defer { if !staged { manifest.pack?.discard() } }
    let opsPath = workspace.opsPath
    let ops = try FileSystem.syscall("open", path: opsPath) {
      open(opsPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
    }
    defer { close(ops) }
    let clock = try store.clock.lastHLC()
    let kind: Mutation.Kind = options.mode == .insert ? .insert : .upsert
    let batch = options.batchSize
    let documents = workspace.documentsDirectory
    // A first import fills the table's packed cache as it writes.
    let recorder =
      manifest.tableWasEmpty ? ImportPackRecorder(store: store, table: table, workspace: workspace) : nil
    let writer = try ImportFileWriter(capacity: batch, directory: documents, recorder: recorder)
    var writerFinished = false
    defer { if !writerFinished { try? writer.finish() } }
    var staging = RowStaging(
      table: table, keyColumn: keyColumn, mode: options.mode, kind: kind, inputName: reader.name,
      manifest: manifest, writer: writer, documents: documents, tableDirectory: tableDirectory, last: clock)
    staging.opBytes.reserveCapacity(1 << 20)

    func bad(_ error: FolioError) throws {
      guard options.continueOnError else { throw error }
      summary.skipped += 1
      onBadRow(error)
    }

    while let event = try reader.next() {
      if let shouldStop = options.shouldStop, shouldStop() {
        throw FolioError(
          .interrupted,
          "interrupted after \(summary.rows) row(s): nothing was imported; table '\(table.name)' is as it was"
        )
      }
      summary.rows += 1
      if summary.rows % 512 == 0 {
        let (done, total) = reader.progress
        onProgress(ImportProgress(rows: summary.rows, done: done, total: total, phase: .reading))
      }
      if summary.rows % batch == 0 && !staging.opBytes.isEmpty {
        try FileSystem.writeAll(ops, staging.opBytes, path: opsPath)
        staging.opBytes.removeAll(keepingCapacity: true)
      }
      switch try stageRow(event, &staging) {
      case .refused(let error): try bad(error)
      case .unchanged: summary.unchanged += 1
      case .created: summary.created += 1
      case .updated: summary.updated += 1
      case .restaged: break
      }
    }
    try FileSystem.writeAll(ops, staging.opBytes, path: opsPath)
    writerFinished = true
    try writer.finish()
    recorder?.settle()
    let (done, total) = reader.progress
    onProgress(ImportProgress(rows: summary.rows, done: done, total: total ?? done, phase: .reading))
    summary.columns = reader.headerColumns
    staged = true
    return StagedImport(
      manifest: manifest, summary: summary, clock: clock, inputName: reader.name, recorder: recorder)
  }

  /// What ``stage`` keeps from row to row.
  private struct RowStaging {
    let table: TableConfig
    let keyColumn: String
    let mode: ImportMode
    let kind: Mutation.Kind
    let inputName: String
    let manifest: ImportManifest
    let writer: ImportFileWriter
    let documents: String
    let tableDirectory: String
    /// The import's clock, from which generated pks and op stamps come.
    var last: HLC?
    /// Op lines not yet written to the staged log.
    var opBytes: [UInt8] = []
  }

  /// What became of one row.
  private enum RowOutcome {
    case refused(FolioError)
    case unchanged
    case created
    case updated
    /// A pk the input held before: staged again, counted once.
    case restaged
  }

  /// Stages one row: its document into the staging folder and its op line
  /// into `staging`.
  private func stageRow(_ event: RowEvent, _ staging: inout RowStaging) throws -> RowOutcome {
    let (table, manifest, writer) = (staging.table, staging.manifest, staging.writer)
    let (documents, tableDirectory, inputName) = (
      staging.documents, staging.tableDirectory, staging.inputName
    )
    func rowError(_ code: FolioError.Code, _ message: String, line: Int) -> FolioError {
      FolioError(code, message, location: .init(file: inputName, line: line, column: 1))
    }
    let value: JSONValue
    let line: Int
    var memberKey: String?
    switch event {
    case .row(let row, let at): (value, line) = (row, at)
    case .keyedRow(let key, let row, let at): (value, line, memberKey) = (row, at, key)
    case .bad(let error):
      return .refused(error)
    }
    guard case .object(var row) = value else {
      return .refused(
        rowError(.invalidDocument, "a row must be a JSON object, not \(value.kindName)", line: line))
    }
    let pk: String
    let fileName: String
    switch importKey(
      of: &row, memberKey: memberKey, keyColumn: staging.keyColumn, table: table, clock: &staging.last,
      at: FolioError.SourceLocation(file: inputName, line: line, column: 1))
    {
    case .success(let found): (pk, fileName) = found
    case .failure(let error):
      return .refused(error)
    }
    let stagedIndex = manifest.index[fileName]
    // Spelled out only for a pk staged before (or an error about it).
    var stagedPath: String { documents + "/" + fileName }
    let stagedBefore = try stagedIndex.flatMap { _ in
      try writer.drain()
      return try FileSystem.read(stagedPath)
    }
    // The file as first read, to tell at landing whether a writer changed
    // it meanwhile. In a table that was empty there is nothing to look up
    // (landing checks that it still is).
    let base =
      stagedIndex == nil && !manifest.tableWasEmpty ? FileStat.of(tableDirectory + "/" + fileName) : nil
    let current: JSONObject?
    switch try rowBase(
      row, pk: pk, fileName: fileName, stagedBefore: stagedBefore, stagedPath: stagedPath, mode: staging.mode,
      table: table, manifest: manifest, tableDirectory: tableDirectory)
    {
    case .unchanged: return .unchanged
    case .refused(let message): return .refused(rowError(.localConstraint, message, line: line))
    case .over(let document): current = document
    }
    let result = Self.imported(row, over: current, mode: staging.mode)
    if let current, JSONValue.object(current) == JSONValue.object(result) {
      return .unchanged
    }
    let bytes: [UInt8]
    switch landingBytes(
      result, table: table, at: FolioError.SourceLocation(file: inputName, line: line, column: 1))
    {
    case .success(let made): bytes = made
    case .failure(let error):
      return .refused(error)
    }
    // The writer is drained (above) for a pk staged before, so its thread
    // is idle while the recorder is told.
    if stagedIndex != nil { writer.recorder?.abandon() }
    try writer.write(bytes, named: fileName, pk: pk)
    try manifest.add(fileName, bytes: bytes, at: stagedIndex, base: base)
    staging.last = HLC.next(after: staging.last, now: SystemClock.nowMilliseconds(), replica: store.replicaID)
    let op = Op(
      hlc: staging.last!, table: table.name, pk: pk, mutation: Mutation(kind: staging.kind), fromTree: true)
    op.appendLogLine(to: &staging.opBytes)
    return stagedBefore != nil ? .restaged : current == nil ? .created : .updated
  }

  /// What an import row meets where it lands.
  private enum RowBase {
    /// The document is the row already.
    case unchanged
    /// Mode insert, and the pk is taken.
    case refused(String)
    /// The document the row lands over; nil: none.
    case over(JSONObject?)
  }

  /// The document import row `row` lands over: the one staged before for
  /// its pk (`stagedBefore`, at `stagedPath`), else the table's. In mode
  /// insert, none: a pk the input or the table holds already refuses the
  /// row, unless that document is exactly the row, so that rerunning an
  /// import that was interrupted after it landed changes nothing.
  private func rowBase(
    _ row: JSONObject, pk: String, fileName: String, stagedBefore: [UInt8]?, stagedPath: String,
    mode: ImportMode,
    table: TableConfig, manifest: ImportManifest, tableDirectory: String
  ) throws -> RowBase {
    let inTable = { (name: String) throws -> JSONObject? in
      manifest.tableWasEmpty ? nil : try store.readDocument(at: tableDirectory + "/" + name)?.object
    }
    guard mode == .insert else {
      if let stagedBefore { return .over(try JSONValue(parsing: stagedBefore, file: stagedPath).objectValue) }
      return .over(try inTable(fileName))
    }
    let existing =
      try stagedBefore.flatMap { try JSONValue(parsing: $0, file: stagedPath).objectValue }
      ?? (try? inTable(fileName)) ?? nil
    if let existing, JSONValue.object(existing) == JSONValue.object(row) { return .unchanged }
    if stagedBefore != nil { return .refused("pk '\(pk)' appears more than once in the input (mode insert)") }
    if !manifest.tableWasEmpty && FileSystem.exists(tableDirectory + "/" + fileName) {
      return .refused(
        "document '\(pk)' already exists in table '\(table.name)'; use --mode upsert, merge or replace to change it"
      )
    }
    return .over(nil)
  }

  /// The pk of import row `row` and its file's name in `table`: from
  /// `keyColumn`, or the key of the member it was in an object keyed by pk
  /// (`memberKey`), or made from the import's `clock` (so generated pks
  /// sort in file order). `row` is made to agree with the table's key.
  /// - Returns: a row error, at `location`, when the row cannot have one.
  private func importKey(
    of row: inout JSONObject, memberKey: String?, keyColumn: String, table: TableConfig, clock: inout HLC?,
    at location: FolioError.SourceLocation
  ) -> Result<(pk: String, fileName: String), FolioError> {
    func refused(_ code: FolioError.Code, _ message: String) -> Result<
      (pk: String, fileName: String), FolioError
    > {
      .failure(FolioError(code, message, location: location))
    }
    if let memberKey {
      // A key column the member's value holds must agree with its key.
      if let own = row[keyColumn], table.key != nil, !Document.keyMatches(own, pk: memberKey) {
        return refused(
          .localConstraint,
          "member '\(memberKey)' holds '\(keyColumn)' \(own.compactString); the key is the pk, so they must agree"
        )
      }
      if row[keyColumn] == nil { row[keyColumn] = .string(memberKey) }
    }
    let pk: String
    switch row[keyColumn] {
    case .string(let text)?: pk = text
    case .number(let text)?: pk = text
    case nil, .null?:
      clock = HLC.next(after: clock, now: SystemClock.nowMilliseconds(), replica: store.replicaID)
      pk = PrimaryKey.generate(at: clock!)
      if table.key != nil { row[keyColumn] = .string(pk) }
    case let other?:
      return refused(
        .invalidPK, "pk column '\(keyColumn)' must be a string or a number, not \(other.kindName)")
    }
    let fileName: String
    do {
      fileName = try table.documentName(for: pk)
    } catch let error as FolioError {
      return refused(.invalidPK, error.message)
    } catch {
      return refused(.invalidPK, "\(error)")
    }
    if let tableKey = table.key, keyColumn != tableKey {
      if let key = row[tableKey] {
        guard Document.keyMatches(key, pk: pk) else {
          return refused(
            .localConstraint,
            "column '\(tableKey)' (the table's key) is \(key.compactString) but --pk column '\(keyColumn)' says '\(pk)'"
          )
        }
      } else {
        row[tableKey] = .string(pk)
      }
    } else if table.key == nil {
      // The pk lives in the file name only: the row's pk column is not
      // part of the document.
      _ = row.removeValue(forKey: keyColumn)
    }
    return .success((pk, fileName))
  }

  /// The document import row `row` makes of `current` (nil: none yet) in
  /// `mode`.
  static func imported(_ row: JSONObject, over current: JSONObject?, mode: ImportMode) -> JSONObject {
    switch mode {
    case .insert, .replace: return row
    case .upsert:
      var merged = current ?? JSONObject()
      for (key, value) in row { merged[key] = value }
      return merged
    case .merge: return Self.deepMerge(current ?? JSONObject(), row)
    }
  }

  /// The bytes `document` lands as, once it passes the table's schema and
  /// the store's size limit; else the row error, at `location`.
  private func landingBytes(
    _ document: JSONObject, table: TableConfig, at location: FolioError.SourceLocation
  ) -> Result<
    [UInt8], FolioError
  > {
    if let violation = table.schema?.validate(.object(document)).first {
      return .failure(FolioError(.schemaViolation, violation.description, location: location))
    }
    let bytes = JSONValue.object(document).canonicalBytes()
    let limit = store.config.limits.documentBytes
    if bytes.count > limit {
      return .failure(
        FolioError(
          .tooLarge,
          "the document would be \(bytes.count) bytes, more than the store's limit of \(limit) (\(ByteSize.format(limit)))",
          location: location))
    }
    return .success(bytes)
  }

  static func fileSize(_ path: String) throws -> Int {
    var st = stat()
    try FileSystem.syscall("stat", path: path) { stat(path, &st) }
    return Int(st.st_size)
  }

  /// `patch` merged into `base` key by key: objects at the same key merge
  /// recursively, anything else in `patch` replaces what `base` holds.
  static func deepMerge(_ base: JSONObject, _ patch: JSONObject) -> JSONObject {
    var result = base
    for (key, value) in patch {
      if case .object(let inner)? = result[key], case .object(let patchInner) = value {
        result[key] = .object(deepMerge(inner, patchInner))
      } else {
        result[key] = value
      }
    }
    return result
  }

  /// Imported documents are written again: they are no longer evicted.
  private func forgetEvictions(table: TableConfig) throws {
    var evicted = try store.evictions.load()
    guard let pks = evicted[table.name], !pks.isEmpty else { return }
    let remaining = pks.filter { pk in
      (try? store.documentPath(table: table, pk: pk.string)).map { !FileSystem.exists($0) } ?? true
    }
    if remaining.count == pks.count { return }
    evicted[table.name] = remaining.isEmpty ? nil : remaining
    try store.evictions.save(evicted)
  }
}
