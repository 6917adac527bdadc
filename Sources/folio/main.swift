internal import CBuildInfo
import Folio
import FolioSystem
import Foundation
import Glibc

/// The top usage line, for errors and `--help`.
let topUsage = "folio [-C DIR] COMMAND [ARGS...]"

/// `folio`: parses the global options, picks the command, and maps errors to
/// exit codes: 0 success, 1 failure, 64 usage.
func main() -> Int32 {
  Output.ignoreBrokenPipeSignal()
  FolioSettings.use(FolioSettings(environment: settingVariables()))
  var arguments = Array(CommandLine.arguments.dropFirst())
  // getcwd and chdir, not FileManager: making one costs a fresh process
  // more than the rest of a `folio get`.
  var path = FileSystem.currentDirectory()
  if let status = takeGlobalOptions(&arguments, path: &path) { return status }
  guard let name = arguments.first else {
    return usageError("missing command", usage: topUsage, command: nil)
  }
  if name == "__complete" { return answerCompletion(Array(arguments.dropFirst()), directory: path) }
  if name == "help" { return printHelp(Array(arguments.dropFirst())) }
  guard let command = allCommands.first(where: { $0.name == name }) else {
    return usageError("unknown command '\(name)'", usage: topUsage, command: nil)
  }
  return runCommand(command, Array(arguments.dropFirst()), in: path)
}

/// The environment variables the library's settings come from, each read
/// with `getenv`: a dictionary of the whole environment costs a fresh
/// process more than these few lookups.
func settingVariables() -> [String: String] {
  var found: [String: String] = [:]
  for name in FolioSettings.variableNames {
    if let value = getenv(name) { found[name] = String(cString: value) }
  }
  return found
}

/// Takes `-C DIR`, `--help` and `--version` off the front of `arguments`.
/// - Returns: the exit status when one of them ends the run.
func takeGlobalOptions(_ arguments: inout [String], path: inout String) -> Int32? {
  while let first = arguments.first, first.hasPrefix("-") {
    switch first {
    case "-C":
      guard arguments.count > 1 else {
        return usageError("option '-C' needs a directory", usage: topUsage, command: nil)
      }
      // As with `git -C`, run as if started there: every relative path in
      // the arguments is then relative to DIR.
      // A directory that is not there is a mistake in the command line,
      // as in `git -C` (which exits 128 for it): usage, 64.
      guard chdir(arguments[1]) == 0 else {
        return usageError(
          "-C \(arguments[1]): no such directory (or it cannot be entered)", usage: topUsage, command: nil)
      }
      path = FileSystem.currentDirectory()
      arguments.removeFirst(2)
    case "-h", "--help":
      Output.print(topHelp(usage: topUsage))
      return 0
    case "--version":
      Output.print(versionLine())
      return 0
    default:
      return usageError("unknown option '\(first)'", usage: topUsage, command: nil)
    }
  }
  return nil
}

/// The completion scripts' question, `folio __complete INDEX WORDS…`
/// (hidden: `folio completion SHELL` writes the scripts that ask it).
func answerCompletion(_ arguments: [String], directory: String) -> Int32 {
  guard let first = arguments.first, let index = Int(first) else { return 64 }
  for candidate in Completion.candidates(
    words: Array(arguments.dropFirst()), index: index, directory: directory)
  {
    Output.print(candidate)
  }
  return 0
}

/// `folio help [COMMAND]`, and `folio help --man [COMMAND]`: a man page of
/// the same text (scripts/install.sh writes them).
func printHelp(_ arguments: [String]) -> Int32 {
  if arguments.first == "--man" {
    let named = arguments.count > 1 ? allCommands.first(where: { $0.name == arguments[1] }) : nil
    if arguments.count > 1 && named == nil {
      return usageError(
        "unknown command '\(arguments[1])'", usage: "folio help --man [COMMAND]", command: "help")
    }
    Output.print(ManPage.roff(for: named, topHelp: topHelp(usage: topUsage)), terminator: "")
    return 0
  }
  if let name = arguments.first, let command = allCommands.first(where: { $0.name == name }) {
    Output.print(command.help)
  } else {
    Output.print(topHelp(usage: topUsage))
  }
  return 0
}

/// Parses `rest` for `command` and runs it in `path`, mapping its errors to
/// exit codes.
func runCommand(_ command: any Command.Type, _ rest: [String], in path: String) -> Int32 {
  let beforeDashes = rest.prefix { $0 != "--" }
  if beforeDashes.contains("-h") || beforeDashes.contains("--help") {
    Output.print(command.help)
    return 0
  }
  do {
    let parsed = try command.init(arguments: rest)
    // One query and out: an inotify watch would cost more at exit than
    // it could save (see OrderIndexCache.setWatchesFolders).
    if !parsed.runsUntilStopped { OrderIndexCache.setWatchesFolders(false) }
    return try parsed.run(in: CommandContext(path: path))
  } catch let error as UsageError {
    return usageError(error.message, usage: command.usage, command: command.name)
  } catch let error as FolioError {
    // A reader that stopped reading streamed output: quiet, as in git.
    if error.code == .io && error.systemError == EPIPE { return 0 }
    Output.error(error.commandLineText)
    return 1
  } catch {
    Output.error("error: \(error)")
    return 1
  }
}

/// `folio 0.1.0 (3f2a9c1d0b7e)`, or the tag alone for a tagged build, or
/// the version alone when the build did not say what it was built from.
func versionLine() -> String {
  let built = String(cString: folio_build_description())
  if built.isEmpty { return "folio \(Folio.version)" }
  if built.hasPrefix("v") && built.dropFirst().first?.isNumber == true { return "folio \(built)" }
  return "folio \(Folio.version) (\(built))"
}

func usageError(_ message: String, usage: String, command: String?) -> Int32 {
  Output.error("error: \(message)\nUsage: \(usage)")
  Output.error("See 'folio \(command.map { "\($0) " } ?? "")--help'.")
  return 64
}

func topHelp(usage: String) -> String {
  let width = allCommands.map { $0.name.count }.max() ?? 0
  let list = allCommands.map { "  \($0.name.padding(toLength: width))  \($0.abstract)" }
    .joined(separator: "\n")
  return """
    OVERVIEW: Folio keeps a database as files: a table is a folder, a document is one JSON
    file in a git repository, and merges add counters up and union sets.

    USAGE: \(usage)

    OPTIONS:
      -C DIR       Run in DIR (the store is the nearest folio.yaml at or above it).
      -h, --help   Show help; 'folio COMMAND --help' shows a command's.
      --version    Show the version.

    COMMANDS:
    \(list)
    """
}

exit(main())
