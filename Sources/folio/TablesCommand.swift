import Folio
import Foundation

struct TablesCommand: Command {
  static let name = "tables"
  static let abstract = "List the tables, or add and remove them in folio.yaml."
  static let usage = """
    folio tables [--json]
           folio tables add NAME [--path PATH] [--key COLUMN | --key-in-name] [--order A[,B…]]
                            [--counter C]… [--set S]…
           folio tables rm NAME
    """
  static let details = """
    ARGUMENTS:
      NAME                The table's name: letters, digits, '_', '-' and '.'.

    OPTIONS:
      --json              List one JSON object per table (NDJSON): name, path, key, documents.
      --path PATH         add: the table's folder, relative to the store (default: data/NAME).
      --key COLUMN        add: the column holding each document's pk (default: id).
      --key-in-name       add: keep the pk in the file name only (key: null), so each document
                          holds exactly what was written, as a Firebase client expects of
                          'folio serve'. Rows of 'query', 'export' and 'import' carry the pk
                          as _key.
      --order A[,B…]      add: order keys, indexed and the default sort of export.
      --counter COLUMN    add: a counter column (an edit 3 -> 5 merges as +2); repeatable.
      --set COLUMN        add: a set column (edits merge as unions and removes); repeatable.

    'add' appends the table to folio.yaml, keeping the file's comments and layout, creates
    its folder and updates .gitattributes. It refuses a name or folder another table has.
    'rm' removes the table's entry from folio.yaml only: its folder and documents stay.
    """

  enum Action {
    case list(json: Bool)
    case add(TableConfig)
    case remove(String)
  }

  var action: Action

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(
      arguments, options: ["--path", "--key", "--order", "--counter", "--set"],
      flags: ["--json", "--key-in-name"],
      repeatable: ["--counter", "--set"])
    switch parsed.positionals.first {
    case nil:
      try parsed.expectPositionals(0...0)
      action = .list(json: parsed.flag("--json"))
    case "add":
      try parsed.expectPositionals(2...2)
      let name = parsed.positionals[1]
      var columns: [String: ColumnKind] = [:]
      for column in parsed.allValues("--counter") { columns[column] = .counter }
      for column in parsed.allValues("--set") {
        if columns[column] != nil {
          throw UsageError("column '\(column)' cannot be both a counter and a set")
        }
        columns[column] = .set
      }
      let order = parsed.value("--order").map {
        $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
      }
      let keyInName = parsed.flag("--key-in-name")
      if keyInName && parsed.value("--key") != nil {
        throw UsageError(
          "--key names the column that holds the pk, --key-in-name says there is none: give one")
      }
      action = .add(
        TableConfig(
          name: name, path: parsed.value("--path") ?? "data/" + name,
          key: keyInName ? nil : parsed.value("--key") ?? "id", order: order ?? [], columns: columns))
    case "rm":
      try parsed.expectPositionals(2...2)
      action = .remove(parsed.positionals[1])
    case let word?:
      throw UsageError("unknown action '\(word)'; use 'add' or 'rm', or no word to list the tables")
    }
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    switch action {
    case .list(let json):
      return try list(store, json: json)
    case .add(let table):
      let (_, entry) = try store.addTable(table)
      Output.print("added table '\(table.name)' to \(Config.fileName):\n" + entry, terminator: "")
      return 0
    case .remove(let name):
      let path = try store.table(named: name).path
      _ = try store.removeTable(named: name)
      Output.print(
        "removed table '\(name)' from \(Config.fileName); its folder \(path)/ and its documents are "
          + "still there (delete them yourself if you no longer want them)")
      return 0
    }
  }

  private func list(_ store: Store, json: Bool) throws -> Int32 {
    var rows: [[String]] = []
    for table in store.config.tables {
      let count = try store.collection(table.name).count()
      if json {
        let row: JSONValue = [
          "name": .string(table.name), "path": .string(table.path),
          "key": table.key.map { .string($0) } ?? .null,
          "documents": .integer(count),
        ]
        Output.print(row.compactString)
      } else {
        rows.append([table.name, table.path, String(count)])
      }
    }
    if !json {
      if rows.isEmpty {
        Output.error("no tables yet; add one with 'folio tables add NAME'")
        return 0
      }
      let header = ["TABLE", "PATH", "DOCUMENTS"]
      let widths = (0..<3).map { column in ([header] + rows).map { $0[column].count }.max()! }
      for row in [header] + rows {
        Output.print(
          row.enumerated().map { $1.padding(toLength: widths[$0]) }.joined(separator: "  ")
            .trimmingTrailingSpaces())
      }
    }
    return 0
  }
}

extension String {
  func padding(toLength length: Int) -> String {
    count >= length ? self : self + String(repeating: " ", count: length - count)
  }

  func trimmingTrailingSpaces() -> String {
    var copy = self
    while copy.last == " " { copy.removeLast() }
    return copy
  }
}
