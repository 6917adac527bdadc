import Folio
import Foundation

struct InitCommand: Command {
  static let name = "init"
  static let abstract = "Create a store (a git repository with folio.yaml), or repair one; safe to rerun."
  static let usage = "folio init [DIR]"
  static let details = """
    ARGUMENTS:
      DIR    The directory to make a store (default: the current one, or -C DIR).

    Creates the git repository if there is none, a minimal folio.yaml, .gitattributes,
    .folio/ops/ and this checkout's replica id in .git/folio/. Registers the merge
    driver and a post-merge hook (in core.hooksPath if set); a post-merge hook of your
    own is kept as post-merge.user and runs after Folio's. Running it again changes
    nothing that exists, and brings .gitattributes in step with folio.yaml.
    """

  var directory: String?

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments)
    try parsed.expectPositionals(0...1)
    directory = parsed.positionals.first
  }

  func run(in context: CommandContext) throws -> Int32 {
    let url = directory.map { URL(fileURLWithPath: $0, relativeTo: context.directory) } ?? context.directory
    let store = try Store.create(at: url, mergeDriver: Executable.path)
    Output.print("Folio store at \(store.root.path) (replica \(store.replicaID))")
    return 0
  }
}
