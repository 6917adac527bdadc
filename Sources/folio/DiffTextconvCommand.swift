import Folio
import FolioSystem

struct DiffTextconvCommand: Command {
  static let name = "diff-textconv"
  static let abstract = "Print a document one JSON path a line, for git's diff driver (git runs it)."
  static let usage = "folio diff-textconv FILE"
  static let details = """
    Registered by 'folio init' in .git/config as diff.folio.textconv and routed by
    .gitattributes (diff=folio), so 'git diff', 'git show' and 'git log -p' compare
    table documents path by path:
      /title = "Buy milk"
      /views = 3
    A file that is not a JSON object is printed as it is. When folio is not on the
    PATH, git shows the file as it is.
    """

  var file: String

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments)
    try parsed.expectPositionals(1...1)
    file = parsed.positionals[0]
  }

  func run(in context: CommandContext) throws -> Int32 {
    let path = file.hasPrefix("/") ? file : context.path + "/" + file
    guard let bytes = try FileSystem.read(path) else {
      throw FolioError(.notFound, "no file '\(file)'", path: file)
    }
    Output.printRaw(Store.textconv(bytes))
    return 0
  }
}
