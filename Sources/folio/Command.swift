import Folio
import Foundation

/// One `folio` subcommand: it parses its own arguments in `init`, and `run`
/// calls the library and prints.
protocol Command {
  /// The word after `folio`.
  static var name: String { get }
  /// One line for `folio --help`.
  static var abstract: String { get }
  /// The `Usage:` line, without `Usage: `.
  static var usage: String { get }
  /// Arguments and options, for `folio NAME --help`.
  static var details: String { get }
  /// Parses and validates the arguments after the command name.
  /// - Throws: ``UsageError`` for a command line that does not parse.
  init(arguments: [String]) throws
  /// Does the work; returns the exit code.
  func run(in context: CommandContext) throws -> Int32
  /// Whether this run goes on until it is stopped (a server, a watcher, a
  /// followed query), so that what pays off over many queries is worth
  /// setting up.
  var runsUntilStopped: Bool { get }
}

extension Command {
  var runsUntilStopped: Bool { false }

  static var help: String {
    "OVERVIEW: \(abstract)\n\nUSAGE: \(usage)\n\n\(details)"
  }
}

/// What every command gets: the directory given by `-C` (or the current one).
struct CommandContext {
  /// The directory's path, which opens the store without going through
  /// `URL` (whose path decoding costs a fresh process more than a `get`).
  var path: String
  /// The directory, for resolving the relative paths in the arguments.
  var directory: URL { URL(fileURLWithPath: path, isDirectory: true) }

  /// Opens the store that holds the directory. A transaction an
  /// interrupted process left that cannot be completed yet is said on
  /// stderr: reads go on, and writes fail with the cause.
  func openStore() throws -> Store {
    let store = try Store(atPath: path)
    if let pending = store.pendingRecoveryError {
      Output.error("warning: \(pending.code): " + (pending.path.map { "\($0): " } ?? "") + pending.message)
    }
    return store
  }
}

/// Every command, in the order `folio --help` lists them.
var allCommands: [any Command.Type] {
  [
    InitCommand.self, TablesCommand.self, GetCommand.self, QueryCommand.self, ObserveCommand.self,
    PutCommand.self, ApplyCommand.self, ConflictsCommand.self, SchemaCommand.self,
    RemoveCommand.self, EvictCommand.self, LogCommand.self, DiffCommand.self, HistoryCommand.self,
    BlameCommand.self,
    FsckCommand.self,
    FormatCommand.self,
    CommitCommand.self, StatusCommand.self, ImportCommand.self, ExportCommand.self, SyncCommand.self,
    CloneCommand.self, CompactCommand.self, MergeDriverCommand.self, DiffTextconvCommand.self,
    WatchCommand.self,
    IndexDaemonCommand.self, ServeCommand.self, CompletionCommand.self,
  ]
}

/// Parses a JSON command-line argument or file; errors name `source`.
func parseJSON(_ text: String, source: String) throws -> JSONValue {
  try JSONValue(parsing: text, file: source)
}

/// Reads a file, or stdin for `-`.
func readInput(_ path: String, in context: CommandContext) throws -> [UInt8] {
  if path == "-" {
    return Array(FileHandle.standardInput.readDataToEndOfFile())
  }
  let url = URL(fileURLWithPath: path, relativeTo: context.directory)
  guard let data = FileManager.default.contents(atPath: url.path) else {
    throw FolioError(.notFound, "cannot read the file", path: path)
  }
  return Array(data)
}

/// The `TABLE PK` arguments of the commands that act on one document.
struct DocumentAddress {
  var table: String
  var pk: String

  init(arguments: [String]) throws {
    try self.init(try CommandLineArguments(arguments))
  }

  init(_ parsed: CommandLineArguments) throws {
    try parsed.expectPositionals(2...2)
    table = parsed.positionals[0]
    pk = parsed.positionals[1]
  }

  /// The error for a document that is not there.
  var notFound: FolioError {
    FolioError(.notFound, "no document '\(pk)' in table '\(table)'", table: table, pk: pk)
  }
}
