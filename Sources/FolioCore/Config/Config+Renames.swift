/// A table's earlier name and the folder it had under that name, from
/// `renamed-from:` in `folio.yaml`.
///
/// A replica that has not seen the rename yet still records ops under the
/// old name and edits files in the old folder; a merge reads both as the
/// renamed table's (see ``Config/renames``).
public struct TableRename: Sendable, Hashable {
  /// The name the table had.
  public var oldName: String
  /// The name it has now.
  public var newName: String
  /// Its folder under the old name.
  public var oldPath: String
  /// Its folder now; the same as ``oldPath`` when the rename left the
  /// folder where it was.
  public var newPath: String
  /// Creates a rename.
  public init(oldName: String, newName: String, oldPath: String, newPath: String) {
    self.oldName = oldName
    self.newName = newName
    self.oldPath = oldPath
    self.newPath = newPath
  }
}

extension Config {
  /// Every rename the tables record, oldest first within a table.
  ///
  /// `folio tables rename` moves a folder only when it sits at the default
  /// place for its name (`data/OLD`, or `OLD` with no `path:`), so the old
  /// folder is the new one with its last segment the old name; any other
  /// folder stays.
  ///
  /// ```swift
  /// let config = try Config(yaml: "version: 1\ntables:\n  tasks:\n    path: data/tasks\n    renamed-from: [todos]\n")
  /// config.renames.first?.oldPath   // "data/todos"
  /// ```
  public var renames: [TableRename] {
    tables.flatMap { table in
      table.renamedFrom.map { old in
        var segments = table.path.split(separator: "/").map(String.init)
        if segments.last == table.name { segments[segments.count - 1] = old }
        return TableRename(
          oldName: old, newName: table.name, oldPath: segments.joined(separator: "/"), newPath: table.path)
      }
    }
  }

  /// The name table `name` has now: `name` itself, or the table whose
  /// `renamed-from` lists it, or `name` when no table has it.
  public func currentTableName(_ name: String) -> String {
    if table(named: name) != nil { return name }
    return tables.first { $0.renamedFrom.contains(name) }?.name ?? name
  }
}
