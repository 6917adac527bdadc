import Folio

struct MergeDriverCommand: Command {
  static let name = "merge-driver"
  static let abstract = "The git merge driver for table documents and op logs (git runs it)."
  static let usage = "folio merge-driver BASE OURS THEIRS PATH"
  static let details = """
    Registered by 'folio init' in .git/config as
      merge.folio.driver = folio merge-driver %O %A %B %P
    and routed by .gitattributes. Writes the merged document over OURS and exits 0;
    exits 1 (leaving OURS untouched, with no conflict markers) if it cannot merge.
    """

  var files: [String]

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments)
    try parsed.expectPositionals(4...4)
    files = parsed.positionals
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    let clean = try store.runMergeDriver(
      basePath: files[0], oursPath: files[1], theirsPath: files[2], path: files[3])
    if !clean { Output.error("error: folio could not merge \(files[3]); kept our version") }
    return clean ? 0 : 1
  }
}
