import FolioSystem
import Foundation

extension Config {
  /// The error for a table `folio.yaml` does not define: it names the tables
  /// there are, suggests a near miss, and its remedy adds the table.
  ///
  /// ```
  /// error: UNKNOWN_TABLE: no table 'todo' in folio.yaml; did you mean 'todos'? Tables are: notes, todos.
  /// To add it: store.addTable(TableConfig(name: "todo", path: "data/todo"))
  /// ```
  public func unknownTableError(_ name: String) -> FolioError {
    var message = "no table '\(name)' in \(Config.fileName)"
    message += nearestTable(to: name).map { "; did you mean '\($0)'?" } ?? "."
    let names = tables.map(\.name).sorted()
    message += names.isEmpty ? " There are no tables yet." : " Tables are: \(names.joined(separator: ", "))."
    return FolioError(.unknownTable, message, table: name, remedy: .addTable(name))
  }

  /// The table whose name is closest to `name`, within two edits (or equal
  /// ignoring case), if there is one.
  func nearestTable(to name: String) -> String? {
    let scored = tables.map { ($0.name, Self.editDistance(name.lowercased(), $0.name.lowercased())) }
    guard let best = scored.min(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 < $1.0) }),
      best.1 <= min(2, max(name.count / 2, 1))
    else { return nil }
    return best.0
  }

  /// Levenshtein distance over Unicode scalars (``NearestName``).
  package static func editDistance(_ a: String, _ b: String) -> Int { NearestName.distance(a, b) }
}
