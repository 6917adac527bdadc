import Folio
import Foundation

struct TablesCommand: Command {
  static let name = "tables"
  static let abstract = "List the tables, or add and remove them in folio.yaml."
  static let usage = """
    folio tables [--json]
           folio tables add NAME [--path PATH] [--key COLUMN | --key-in-name] [--order A[,B…]]
                            [--counter C]… [--set S]… [--layout nested|hashed|flat]
           folio tables rm NAME
           folio tables rename OLD NEW
           folio tables layout TABLE nested|hashed|flat
           folio tables subscribe|unsubscribe TABLE
           folio tables index add|rm TABLE PATH
           folio tables index list TABLE [--json]
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
      --layout L          add: nested (default) keeps each document file two folders
                          down, named by the SHA-1 of its pk (data/NAME/86/f/a.json), so
                          a commit of a few documents writes a few small git trees however
                          big the table grows; hashed uses one level of 256 folders
                          (data/NAME/86/a.json); flat keeps every file in the folder.

    'add' appends the table to folio.yaml, keeping the file's comments and layout, creates
    its folder and updates .gitattributes. It refuses a name or folder another table has.
    'rm' removes the table's entry from folio.yaml only: its folder and documents stay.
    'rename' commits what is pending, then makes one commit that renames the table in
    folio.yaml (its old name goes to 'renamed-from:'), moves its folder when it is at the
    default place (data/OLD becomes data/NEW) and updates .gitattributes; its indexes are
    rebuilt under the new name. Other replicas take the rename with 'folio sync'; what they
    write under the old name meanwhile is merged into the renamed table.
    'layout' commits what is pending, then makes one commit that sets the table's 'layout:'
    and moves its document files to their places in it (git sees moves, no op is recorded).
    Other replicas take it with 'folio sync'; what they write in the old layout meanwhile is
    merged into the new one.

    PARTIAL REPLICAS (see docs/sync.md):
      subscribe TABLE       Fetches TABLE's documents from the remote this replica was cloned
                            from and checks them out: a replica cloned with --tables holds it
                            from then on. Its syncs bring the table's changes too.
      unsubscribe TABLE     Removes TABLE's files from the working tree and leaves the table on
                            the remote: queries say it is absent, and nothing this replica does
                            records a change to it. Refused while it has changes not committed.

    INDEXES:
      index add TABLE PATH  Adds PATH to the table's 'indexes:' in folio.yaml (comments and
                            layout kept) and builds the index, so that filters on PATH read a
                            range of it instead of every document.
      index rm TABLE PATH   Removes PATH from 'indexes:' and rebuilds the table's index files
                            in .git/folio without it. Order keys stay indexed while they are
                            listed under 'order'.
      index list TABLE      The table's order keys and indexes (--json: one JSON object per
                            path, NDJSON).
    PATH is a field path: segments joined by '.', a segment in backticks taken whole
    (`dep time`, meta.`a.b`).
    """

  enum Action {
    case list(json: Bool)
    case add(TableConfig)
    case remove(String)
    case addIndex(table: String, path: FieldPath)
    case removeIndex(table: String, path: FieldPath)
    case listIndexes(table: String, json: Bool)
    case rename(from: String, to: String)
    case layout(table: String, TableLayout)
    case subscribe(String)
    case unsubscribe(String)
  }

  var action: Action

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(
      arguments, options: ["--path", "--key", "--order", "--counter", "--set", "--layout"],
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
          key: keyInName ? nil : parsed.value("--key") ?? "id", order: order ?? [], columns: columns,
          layout: try parsed.layout()))
    case "rm":
      try parsed.expectPositionals(2...2)
      action = .remove(parsed.positionals[1])
    case "index":
      action = try Self.indexAction(parsed)
    case "rename":
      try parsed.expectPositionals(3...3)
      action = .rename(from: parsed.positionals[1], to: parsed.positionals[2])
    case "layout":
      try parsed.expectPositionals(3...3)
      guard let layout = TableLayout(rawValue: parsed.positionals[2]) else {
        throw UsageError("a layout is nested, hashed or flat, not '\(parsed.positionals[2])'")
      }
      action = .layout(table: parsed.positionals[1], layout)
    case "subscribe":
      try parsed.expectPositionals(2...2)
      action = .subscribe(parsed.positionals[1])
    case "unsubscribe":
      try parsed.expectPositionals(2...2)
      action = .unsubscribe(parsed.positionals[1])
    case let word?:
      throw UsageError(
        "unknown action '\(word)'; use 'add', 'rm', 'rename', 'layout', 'index', 'subscribe' or "
          + "'unsubscribe', or no word to list the tables"
      )
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
    case .addIndex(let name, let path):
      let reopened = try store.addIndex(path, to: name)
      try reopened.buildIndexes(table: name)
      let count = try reopened.collection(name).count()
      Output.print(
        "added index \(Self.commandLineText(path)) to table '\(name)' in \(Config.fileName) and built it "
          + "over \(count) document(s)")
      return 0
    case .removeIndex(let name, let path):
      let reopened = try store.removeIndex(path, from: name)
      try reopened.buildIndexes(table: name)
      Output.print(
        "removed index \(Self.commandLineText(path)) from table '\(name)' in \(Config.fileName); "
          + "the table's index files no longer hold it")
      return 0
    case .rename(let old, let new):
      let before = try store.table(named: old).path
      let (renamed, commit) = try store.renameTable(old, to: new)
      try renamed.removeIndexFiles(ofFormerTable: old)
      try renamed.buildIndexes(table: new)
      let path = try renamed.table(named: new).path
      Output.print(
        "renamed table '\(old)' to '\(new)' in \(Config.fileName)"
          + (path == before ? "" : ", moved \(before)/ to \(path)/") + "; committed \(commit.prefix(12))")
      return 0
    case .layout(let name, let layout):
      let documents = try store.collection(name).count()
      let (_, commit) = try store.setLayout(layout, of: name)
      guard let commit else {
        Output.print("table '\(name)' has the \(layout.rawValue) layout already; nothing to do")
        return 0
      }
      Output.print(
        "moved the \(documents) document(s) of table '\(name)' to the \(layout.rawValue) layout; "
          + "committed \(commit.prefix(12))")
      return 0
    case .subscribe(let name):
      let wasAbsent = store.absentTables.contains { $0.name == store.config.currentTableName(name) }
      try store.subscribe(table: name)
      let count = try store.collection(name).count()
      Output.print(
        wasAbsent
          ? "fetched table '\(name)': \(count) document(s) checked out"
          : "table '\(name)' is held on this replica already (\(count) document(s))")
      return 0
    case .unsubscribe(let name):
      let wasHeld = !store.absentTables.contains { $0.name == store.config.currentTableName(name) }
      try store.unsubscribe(table: name)
      Output.print(
        wasHeld
          ? "left table '\(name)' on the remote: its files are gone from this replica"
          : "table '\(name)' is not on this replica already")
      return 0
    case .listIndexes(let name, let json):
      return try listIndexes(try store.table(named: name), json: json)
    case .remove(let name):
      let path = try store.table(named: name).path
      _ = try store.removeTable(named: name)
      Output.print(
        "removed table '\(name)' from \(Config.fileName); its folder \(path)/ and its documents are "
          + "still there (delete them yourself if you no longer want them)")
      return 0
    }
  }

  /// `index add|rm TABLE PATH` and `index list TABLE`.
  private static func indexAction(_ parsed: CommandLineArguments) throws -> Action {
    let verb = parsed.positionals.count > 1 ? parsed.positionals[1] : nil
    switch verb {
    case "add", "rm":
      try parsed.expectPositionals(4...4)
      let table = parsed.positionals[2]
      let path: FieldPath
      do {
        path = try FieldPath(parsing: parsed.positionals[3], source: "PATH")
      } catch let error as FolioError {
        throw UsageError("invalid PATH '\(parsed.positionals[3])': \(error.message)")
      }
      return verb == "add" ? .addIndex(table: table, path: path) : .removeIndex(table: table, path: path)
    case "list":
      try parsed.expectPositionals(3...3)
      return .listIndexes(table: parsed.positionals[2], json: parsed.flag("--json"))
    case nil:
      throw UsageError("'index' needs an action: add, rm or list")
    case let word?:
      throw UsageError("unknown index action '\(word)'; use add, rm or list")
    }
  }

  private func listIndexes(_ table: TableConfig, json: Bool) throws -> Int32 {
    let rows = table.order.map { ($0, "order") } + table.indexes.map { ($0, "index") }
    if json {
      for (path, kind) in rows {
        let row: JSONValue = [
          "table": .string(table.name), "path": .string(Self.commandLineText(FieldPath(path))),
          "kind": .string(kind),
        ]
        Output.print(row.compactString)
      }
      return 0
    }
    if rows.isEmpty {
      Output.error(
        "table '\(table.name)' has no order keys or indexes; add one with 'folio tables index add \(table.name) PATH'"
      )
      return 0
    }
    let text = [("PATH", "KIND")] + rows.map { (Self.commandLineText(FieldPath($0.0)), $0.1) }
    let width = text.map(\.0.count).max()!
    for (path, kind) in text { Output.print(path.padding(toLength: width) + "  " + kind) }
    return 0
  }

  /// A path as it is typed on the command line: a segment that holds a
  /// `.`, a space, a `,` or a `~` goes in backticks.
  static func commandLineText(_ path: FieldPath) -> String {
    path.segments.map { segment in
      segment.contains(where: { ".~, \t".contains($0) }) && !segment.contains("`") ? "`\(segment)`" : segment
    }.joined(separator: ".")
  }

  private func list(_ store: Store, json: Bool) throws -> Int32 {
    var rows: [[String]] = []
    let absent = Set(store.absentTables.map(\.name))
    for table in store.config.tables {
      // A partial replica's absent table: said so, not counted as empty.
      let count = absent.contains(table.name) ? nil : try store.collection(table.name).count()
      if json {
        var fields: JSONObject = [
          "name": .string(table.name), "path": .string(table.path),
          "key": table.key.map { .string($0) } ?? .null,
          "documents": count.map { .integer($0) } ?? .null,
        ]
        if count == nil { fields["absent"] = .bool(true) }
        let row = JSONValue.object(fields)
        Output.print(row.compactString)
      } else {
        rows.append([table.name, table.path, count.map(String.init) ?? "absent (not on this replica)"])
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
