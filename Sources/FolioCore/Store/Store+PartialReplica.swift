import FolioSystem
import Synchronization

/// A partial replica: a clone that holds some of the store's tables
/// (`folio clone --tables`, ``Store/subscribe(table:)``). The others stay
/// on the remote: their commits and trees are here, their documents are
/// not, and nothing this replica does records a change to them.
extension Store {
  /// Where a partial replica keeps the names of the tables it holds, one
  /// to a line. No file: the replica holds every table.
  package var heldTablesPath: String { privateDirectory + "/tables" }

  /// The names of the tables this replica holds, when it is a partial
  /// replica; nil when it holds every table. Read once per store opened
  /// (every write asks): a subscription another process makes counts for a
  /// store opened after it.
  public var heldTableNames: Set<String>? {
    heldTableNamesCache.withLock { cached in
      if let cached { return cached }
      var names: Set<String>?
      if let bytes = try? FileSystem.read(heldTablesPath) {
        names = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where !line.isEmpty {
          names!.insert(config.currentTableName(String(line)))
        }
      }
      cached = .some(names)
      return names
    }
  }

  /// The tables of `folio.yaml` this replica does not hold: a partial
  /// replica's others. Empty for a full replica.
  public var absentTables: [TableConfig] {
    guard let held = heldTableNames else { return [] }
    return config.tables.filter { !held.contains($0.name) }
  }

  /// The tables of `folio.yaml` this replica holds, in its order: every
  /// table of a full replica. What is scanned, served, watched and listed.
  public var heldTables: [TableConfig] {
    guard let held = heldTableNames else { return config.tables }
    return config.tables.filter { held.contains($0.name) }
  }

  /// Records the tables this replica holds (nil: every table).
  package func saveHeldTableNames(_ names: Set<String>?) throws {
    if let names {
      let text = names.sorted().map { $0 + "\n" }.joined()
      try FileSystem.writeAtomically(heldTablesPath, Array(text.utf8), sync: true)
    } else {
      _ = try FileSystem.remove(heldTablesPath)
    }
    heldTableNamesCache.withLock { $0 = .some(names) }
  }

  /// The error for a table this partial replica does not hold.
  package func absentTableError(_ name: String) -> FolioError {
    let held = (heldTableNames ?? []).sorted()
    return FolioError(
      .tableAbsent,
      "table '\(name)' is not on this replica: its documents stay on the remote (this partial "
        + "replica holds \(held.isEmpty ? "no table" : held.joined(separator: ", ")))",
      table: name, remedy: .subscribeTable(name))
  }
}
