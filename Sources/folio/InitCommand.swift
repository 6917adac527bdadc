import Folio
import Foundation

struct InitCommand: Command {
  static let name = "init"
  static let abstract = "Create a store (a git repository with folio.yaml), or repair one; safe to rerun."
  static let usage = "folio init [DIR] [--table NAME[:PATH]]… [--layout nested|hashed|flat] [--editor vscode]"
  static let details = """
    ARGUMENTS:
      DIR                    The directory to make a store (default: the current one, or -C DIR).

    OPTIONS:
      --table NAME[:PATH]    Add a table (folder PATH, default data/NAME); repeatable. A
                             table already there with that folder is left as it is.
      --layout L             The --table tables' layout: nested (default; document files
                             in 4,096 folders two levels down, so a commit of a few stays
                             small however big the table grows), hashed (256 folders) or
                             flat (every file in the table's folder).
      --editor vscode        Map each table's folder to its JSON Schema ('schema:' in
                             folio.yaml) in .vscode/settings.json, merged into the file
                             if there is one, so VS Code checks documents as you type.

    Creates the git repository if there is none, a minimal folio.yaml, .gitattributes,
    .folio/ops/ and this checkout's replica id in .git/folio/. Registers the merge
    driver and a post-merge hook (in core.hooksPath if set); a post-merge hook of your
    own is kept as post-merge.user and runs after Folio's. Running it again changes
    nothing that exists, and brings .gitattributes in step with folio.yaml.
    """

  var directory: String?
  var tables: [TableConfig]
  var vscode: Bool

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(
      arguments, options: ["--table", "--editor", "--layout"], repeatable: ["--table"])
    let layout = try parsed.layout()
    try parsed.expectPositionals(0...1)
    switch parsed.value("--editor") {
    case nil: vscode = false
    case "vscode": vscode = true
    case let other?: throw UsageError("--editor takes vscode, not '\(other)'")
    }
    directory = parsed.positionals.first
    tables = try parsed.allValues("--table").map { spec in
      let parts = spec.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
      guard !parts[0].isEmpty else {
        throw UsageError("--table needs a name, as in --table todos or todos:data/todos")
      }
      return TableConfig(
        name: parts[0], path: parts.count > 1 ? parts[1] : "data/" + parts[0], layout: layout)
    }
  }

  func run(in context: CommandContext) throws -> Int32 {
    let url = directory.map { URL(fileURLWithPath: $0, relativeTo: context.directory) } ?? context.directory
    var store = try Store.create(at: url, mergeDriver: Executable.path)
    Output.print("Folio store at \(store.root.path) (replica \(store.replicaID))")
    for table in tables where store.config.table(named: table.name)?.path != table.path {
      let added = try store.addTable(table)
      store = added.store
      Output.print("added table '\(table.name)' to \(Config.fileName):\n" + added.entry, terminator: "")
    }
    if vscode {
      let mapped = try store.writeVSCodeSettings()
      Output.print(
        "\(Store.vscodeSettingsPath): "
          + (mapped.isEmpty
            ? "no table has a schema yet (add 'schema:' to a table in \(Config.fileName))"
            : "json.schemas maps " + mapped.joined(separator: ", ")))
    }
    return 0
  }
}
