import Folio

struct TablesCommand: Command {
  static let name = "tables"
  static let abstract = "List the tables with their folder and document count."
  static let usage = "folio tables [--json]"
  static let details = """
    OPTIONS:
      --json    One JSON object per table (NDJSON): name, path, key, documents.
    """

  var json: Bool

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments, flags: ["--json"])
    try parsed.expectPositionals(0...0)
    json = parsed.flag("--json")
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    var rows: [[String]] = []
    for table in store.config.tables {
      let count = try store.collection(table.name).count()
      if json {
        let row: JSONValue = [
          "name": .string(table.name), "path": .string(table.path), "key": .string(table.key),
          "documents": .integer(count),
        ]
        Output.print(row.compactString)
      } else {
        rows.append([table.name, table.path, String(count)])
      }
    }
    if !json {
      if rows.isEmpty {
        Output.error("no tables yet; add one under 'tables:' in folio.yaml")
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
