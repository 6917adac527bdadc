import FolioJSON
import FolioSystem
import Glibc

extension Store {
  /// Every problem `folio fsck` finds, each as an error with a file position
  /// where it has one: documents that are not valid JSON or not objects, key
  /// columns that disagree with the file name, documents that break their
  /// table's schema (each violation), files in a table folder that are not
  /// documents, op-log lines that don't parse or name an unknown table, and
  /// what the later layers check (conflict records).
  public func check() throws -> [FolioError] {
    var problems: [FolioError] = []
    if let pending = pendingRecoveryError { problems.append(pending) }
    problems += config.tables.compactMap(\.missingSchemaError)
    for table in config.tables {
      let directory = directory(of: table)
      for name in try fsckNames(of: table, in: directory) {
        let path = directory + "/" + name
        let display = relative(path)
        func problem(_ message: String, line: Int = 1, column: Int = 1) {
          problems.append(
            FolioError(
              .invalidDocument, message, location: .init(file: display, line: line, column: column),
              table: table.name))
        }
        var st = stat()
        if lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK {
          problems.append(FileSystem.unsafePathError(display, isLink: true))
          continue
        }
        if FileSystem.isDirectory(path) {
          problem("a table folder holds only documents; move this folder out of '\(table.path)'")
          continue
        }
        if name.hasSuffix(".folio-tmp") {
          problem("leftover temporary file from an interrupted write; delete it")
          continue
        }
        guard let pk = PrimaryKey.pk(fromFileName: String(name.split(separator: "/").last ?? "")) else {
          problem(
            "not a document file name: expected <pk>.json with bytes outside [A-Za-z0-9._-] percent-encoded")
          continue
        }
        if table.pk(fromDocumentName: name) == nil, let place = try? table.documentName(for: pk) {
          problem(
            "document '\(pk)' is not where table '\(table.name)' (layout \(table.layout.rawValue)) keeps it, "
              + "so Folio does not read it: move it to '\(table.path(ofDocumentName: place))'")
          continue
        }
        do {
          guard let (bytes, object) = try readDocument(at: path) else { continue }
          if let keyColumn = table.key {
            guard let key = object[keyColumn] else {
              problem("missing key column '\(keyColumn)'; it must equal the file's pk \"\(pk)\"")
              continue
            }
            if !Document.keyMatches(key, pk: pk) {
              let (line, column) = Store.position(ofMember: keyColumn, in: bytes)
              problem(
                "key column '\(keyColumn)' is \(key.compactString) but the file name says the pk is \"\(pk)\"",
                line: line, column: column)
            }
          }
          problems += config.schemaProblems(object, bytes: bytes, table: table, path: display)
        } catch let error as FolioError {
          problems.append(error)
        }
      }
    }
    let directory = rootPath + "/" + Store.opsFolder
    for name in (try FileSystem.list(directory) ?? []).sorted() where name.hasSuffix(".ndjson") {
      let display = Store.opsFolder + "/" + name
      do {
        for entry in try OpLog.entries(in: directory + "/" + name, displayName: display)
        where config.table(named: entry.op.table) == nil {
          problems.append(
            FolioError(
              .unknownTable, "op for table '\(entry.op.table)', which \(Config.fileName) does not define",
              location: .init(file: display, line: entry.line, column: 1)))
        }
      } catch let error as FolioError {
        problems.append(error)
      }
    }
    for check in wiring.checks { problems += try check.problems(in: self) }
    return problems
  }

  /// The entries `fsck` looks at in the folder of `table`, sorted: its
  /// files and folders, and in a hashed or nested table the entries of
  /// each of its folders (as `xx/name`, `xx/y/name`) in place of the folder.
  private func fsckNames(of table: TableConfig, in directory: String) throws -> [String] {
    let layout = table.layout
    func names(in inner: String, level: Int) throws -> [String] {
      let base = inner.isEmpty ? directory : directory + "/" + inner
      var result: [String] = []
      for name in (try FileSystem.list(base) ?? []).sorted() {
        let path = inner.isEmpty ? name : inner + "/" + name
        if layout.isFolder(name, level: level) && FileSystem.isDirectoryNoFollow(base + "/" + name) {
          result += try names(in: path, level: level + 1)
        } else {
          result.append(path)
        }
      }
      return result
    }
    return try names(in: "", level: 0)
  }

  /// The line and column of the first `"key"` member name in `bytes`, or 1:1.
  /// Good enough to point an editor at the key column.
  package static func position(ofMember key: String, in bytes: [UInt8]) -> (Int, Int) {
    let needle = Array(("\"" + key + "\"").utf8)
    guard needle.count <= bytes.count else { return (1, 1) }
    for i in 0...(bytes.count - needle.count)
    where bytes[i] == needle[0] && bytes[i..<(i + needle.count)].elementsEqual(needle) {
      return bytes.withUnsafeBytes { SourceText.lineAndColumn(of: i, in: $0) }
    }
    return (1, 1)
  }

  /// Rewrites the documents of `table` (or of every table) in canonical
  /// form. Content does not change, so nothing is logged.
  /// - Returns: the files rewritten, and the errors for files that could not
  ///   be read (left untouched).
  public func format(table name: String? = nil) throws -> (rewritten: [String], problems: [FolioError]) {
    let tables = try name.map { [try table(named: $0)] } ?? config.tables
    return try lock.withLock {
      try recoverBeforeWrite()
      var rewritten: [String] = []
      var problems: [FolioError] = []
      for table in tables {
        let directory = directory(of: table)
        for fileName in (try table.listDocumentNames(in: directory) ?? []).sorted()
        where table.pk(fromDocumentName: fileName) != nil {
          let path = directory + "/" + fileName
          do {
            guard let (bytes, object) = try readDocument(at: path) else { continue }
            let canonical = JSONValue.object(object).canonicalBytes()
            if canonical != bytes {
              try FileSystem.writeAtomically(path, canonical, sync: false, under: rootPath)
              rewritten.append(relative(path))
            }
          } catch let error as FolioError {
            problems.append(error)
          }
        }
      }
      if !rewritten.isEmpty { try FileSystem.syncFileSystem(containing: rootPath) }
      return (rewritten, problems)
    }
  }

  /// The op log of every replica, oldest first, optionally for one table or
  /// one document.
  public func ops(table: String? = nil, pk: String? = nil) throws -> [Op] {
    // An op recorded under a table's former name is the table's.
    try OpLog.allEntries(root: rootPath).map(\.op).filter {
      (table == nil || config.currentTableName($0.table) == table) && (pk.map($0.pk.utf8Equals) ?? true)
    }
  }

  /// `.gitattributes` lines that route each table's files to Folio's merge
  /// and diff drivers, kept in step with `folio.yaml`. Lines the user wrote are kept.
  package func writeGitAttributes() throws {
    let path = rootPath + "/.gitattributes"
    let existing = (try FileSystem.read(path)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    let joined = Self.gitAttributes(existing: existing, tables: config.tables)
    if joined != existing {
      try FileSystem.writeAtomically(path, Array(joined.utf8), sync: true)
    }
  }

  /// The text of `.gitattributes` for `tables`: Folio's block made anew,
  /// the lines the user wrote in `existing` kept.
  package static func gitAttributes(existing: String, tables: [TableConfig]) -> String {
    let begin = "# BEGIN folio: generated from folio.yaml, edit that instead"
    let end = "# END folio"
    var kept: [String] = []
    var inside = false
    for line in existing.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
      if line == begin {
        inside = true
      } else if line == end {
        inside = false
      } else if !inside {
        kept.append(line)
      }
    }
    while kept.last == "" { kept.removeLast() }
    var block = [begin, "\(Store.opsFolder)/*.ndjson merge=folio"]
    // In a pattern with a slash, `*` stops at one: a hashed or nested
    // table's files are a level or two down.
    block += tables.map {
      "\($0.path)/\(String(repeating: "*/", count: $0.layout.depth))*.json merge=folio diff=folio"
    }
    block.append(end)
    let text = (kept.isEmpty ? [] : kept + [""]) + block
    return text.joined(separator: "\n") + "\n"
  }
}

/// Completing interrupted writes, done by ``StoreRecovery``.
extension Store {
  /// Why the transaction an interrupted writer left behind could not be
  /// completed when the store was opened, or nil if there was none or it
  /// was completed.
  ///
  /// A store with a pending transaction still reads: `get`, queries,
  /// `status` and `fsck` work and can show this. Each write tries to
  /// complete the transaction first, and fails with this cause until it
  /// has been fixed.
  ///
  /// ```swift
  /// if let pending = store.pendingRecoveryError { print("warning: \(pending.message)") }
  /// ```
  public var pendingRecoveryError: FolioError? { recoveryFailure.withLock { $0 } }

  /// Finishes a transaction that a crash interrupted. Call with the lock
  /// held (see ``StoreRecovery/recover(keepingDeferred:)``).
  package func recover(keepingDeferred: Bool = false) throws {
    try recovery.recover(keepingDeferred: keepingDeferred)
  }

  /// Completes an interrupted transaction before a write (with the lock
  /// held), or throws its cause and how to fix it.
  package func recoverBeforeWrite(keepingDeferred: Bool = false) throws {
    try recovery.beforeWrite(keepingDeferred: keepingDeferred)
  }

  /// Completes an interrupted transaction if it can (with the lock held),
  /// for a command that only reads; a failure is kept for
  /// ``pendingRecoveryError``.
  package func recoverForReading() { recovery.forReading() }
}
