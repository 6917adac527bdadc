import Folio
import Foundation
import Glibc

struct WatchCommand: Command {
  static let name = "watch"
  var runsUntilStopped: Bool { true }
  static let abstract = "Record saves from any text editor as mutations, until Ctrl-C."
  static let usage =
    "folio watch [--json] [--debounce DURATION] [--commit-every DURATION] [--sync-every DURATION [--remote NAME] [--no-push]]"
  static let details = """
    OPTIONS:
      --json                    One JSON object per line: {"event":"ready"}, then one per op
                                recorded ("op"), problem ("problem"), commit and sync.
      --debounce DURATION       How long a file must stay quiet before it is read (default 50ms).
      --commit-every DURATION   Commit this often, and once more on exit.
      --sync-every DURATION     Sync (commit, fetch, merge, push) this often.
      --remote NAME             The remote to sync with (default: origin).
      --no-push                 Sync without pushing.

    DURATION is a number and a unit: 500ms, 5s, 2m, 1h (or combined, such as 1h30m).

    On start, changes made while nothing watched are recorded first. Then every save in a
    table folder is diffed against what Folio last wrote or recorded: counter columns become
    increments, set columns unions and removes, other columns assignments and unsets by
    path; a new file is an insert, a deleted one a remove. Swap, backup and temp files are
    ignored. A file with invalid JSON, or whose key column names another pk, is reported as
    path:line:col and left as it is. Ctrl-C (SIGINT) or SIGTERM records what is pending and
    exits 0.
    """

  var json: Bool
  var options = Watcher.Options()

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(
      arguments, options: ["--debounce", "--commit-every", "--sync-every", "--remote"],
      flags: ["--json", "--no-push"])
    try parsed.expectPositionals(0...0)
    json = parsed.flag("--json")
    func duration(_ name: String) throws -> Duration? {
      guard let text = parsed.value(name) else { return nil }
      do {
        return try DurationParser.parse(text)
      } catch let error as FolioError {
        throw UsageError("\(name): \(error.message)")
      }
    }
    if let debounce = try duration("--debounce") { options.debounce = debounce }
    options.commitEvery = try duration("--commit-every")
    options.syncEvery = try duration("--sync-every")
    if let remote = parsed.value("--remote") { options.remote = remote }
    options.push = !parsed.flag("--no-push")
    if options.syncEvery == nil && (parsed.value("--remote") != nil || parsed.flag("--no-push")) {
      throw UsageError("'--remote' and '--no-push' go with '--sync-every'")
    }
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    let json = self.json
    let root = store.root.path
    let remote = options.remote
    let watcher = try Watcher(store: store, options: options) { event in
      WatchCommand.print(event, json: json, root: root, remote: remote)
    }
    _ = try InterruptSignals { watcher.stop() }
    // While this runs, fresh `folio query` processes may trust the order
    // indexes instead of checking every file (see IndexPublisher).
    let publisher: IndexPublisher?
    do {
      publisher = try store.publishIndexes()
    } catch let error as FolioError {
      Output.error("warning: queries will check every file: \(error.message)")
      publisher = nil
    }
    defer { publisher?.stop() }
    try watcher.run()
    return 0
  }

  static func print(_ event: WatchEvent, json: Bool, root: String, remote: String) {
    switch event {
    case .ready(let tables):
      if json {
        Output.print(
          JSONValue.object(["event": "ready", "tables": .array(tables.map(JSONValue.string))]).compactString)
      } else {
        Output.error("watching \(tables.count) table(s) in \(root); press Ctrl-C to stop")
      }
    case .recorded(let op, let file):
      if json {
        guard case .object(var object) = op.json else { return }
        object["event"] = "op"
        object["file"] = .string(file)
        Output.print(JSONValue.object(object).compactString)
      } else {
        Output.print(describe(op, file: file))
      }
    case .problem(let error):
      if json {
        var object: JSONObject = [
          "event": "problem", "code": .string(error.code.rawValue), "message": .string(error.message),
          "error": .string(error.commandLineText),
        ]
        if let location = error.location {
          object["file"] = .string(location.file)
          object["line"] = .number(String(location.line))
          object["column"] = .number(String(location.column))
        } else if let path = error.path {
          object["file"] = .string(path)
        }
        Output.print(JSONValue.object(object).compactString)
      } else {
        Output.error(error.commandLineText)
      }
    case .rescanned:
      if json {
        Output.print(#"{"event":"rescan"}"#)
      } else {
        Output.error(
          "warning: the kernel dropped file events (inotify queue overflow); rescanned every table")
      }
    case .committed(let summary):
      let commit = summary.commit ?? ""
      if json {
        let object: JSONObject = [
          "event": "commit", "commit": .string(commit), "documents": .number(String(summary.documents)),
        ]
        Output.print(JSONValue.object(object).compactString)
      } else {
        Output.print("committed \(commit.prefix(12)): \(summary.documents) document(s)")
      }
    case .synced(let summary):
      if json {
        let object: JSONObject = [
          "event": "sync", "remote": .string(remote), "action": .string(summary.action.rawValue),
          "pushed": .bool(summary.pushed), "head": summary.head.map(JSONValue.string) ?? .null,
        ]
        Output.print(JSONValue.object(object).compactString)
      } else {
        Output.print(
          "synced with \(remote): \(summary.action.rawValue)" + (summary.pushed ? ", pushed" : ""))
      }
    }
  }

  /// `data/todos/a.json: update set {"done":true} unset ["draft"] transforms {"views":…}`.
  static func describe(_ op: Op, file: String) -> String {
    var line = "\(file): \(op.mutation.kind.rawValue)"
    guard case .object(let object) = op.json else { return line }
    for field in ["set", "unset", "transforms"] {
      if let value = object[field] { line += " \(field) \(value.compactString)" }
    }
    return line
  }
}
