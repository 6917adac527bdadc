import Folio

struct FsckCommand: Command {
  static let name = "fsck"
  static let abstract = "Check every document and op log line; report each problem with file:line:col."
  static let usage = "folio fsck"
  static let details = """
    Checks that each document is valid JSON, is an object, holds its pk in the key
    column, and has a valid file name; that table folders hold only documents; and
    that every op-log line parses and names a known table.

    Problems go to stderr as 'path:line:col: error: …'. Exits 1 if there are any.
    """

  init(arguments: [String]) throws {
    try CommandLineArguments(arguments).expectPositionals(0...0)
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    var problems = try store.check()
    if let problem = store.pendingCheckoutProblem() {
      problems.append(FolioError(.io, "unfinished sync checkout: \(problem)"))
    }
    for problem in problems { Output.error(problem.commandLineText) }
    var documents = 0
    // A partial replica checks the tables it holds, and says which it does not.
    let held = store.heldTables
    for table in held { documents += try store.collection(table.name).count() }
    let tables = held.count
    let absent = store.absentTables.map(\.name).sorted()
    Output.print(
      "checked \(documents) document\(documents == 1 ? "" : "s") in \(tables) table\(tables == 1 ? "" : "s"): "
        + (problems.isEmpty ? "ok" : "\(problems.count) problem\(problems.count == 1 ? "" : "s")")
        + (absent.isEmpty ? "" : " (not on this replica: \(absent.joined(separator: ", ")))"))
    return problems.isEmpty ? 0 : 1
  }
}
