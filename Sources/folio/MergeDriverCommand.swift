import Folio

struct MergeDriverCommand: Command {
  static let name = "merge-driver"
  static let abstract = "The git merge driver for table documents and op logs (git runs it)."
  static let usage = "folio merge-driver BASE OURS THEIRS PATH | folio merge-driver --post-merge [SQUASH]"
  static let details = """
    Registered by 'folio init' in .git/config as
      merge.folio.driver = folio merge-driver %O %A %B %P
    and routed by .gitattributes. Writes the merged document over OURS and exits 0;
    exits 1 (leaving OURS untouched, with no conflict markers) if it cannot merge.

    OPTIONS:
      --post-merge     Run by the .git/hooks/post-merge hook that 'folio init'
                       installs, after 'git merge' or 'git pull' made a merge
                       commit. git runs the driver only for files both sides
                       changed; a document with ops on both sides but a changed
                       file on one side only is replayed here, and the merge
                       commit and working tree are rewritten to match what
                       'folio sync' gives. Prints the documents it rewrote.
    """

  var files: [String]
  var postMerge = false

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments, flags: ["--post-merge"])
    postMerge = parsed.flag("--post-merge")
    // git passes the hook one argument: whether the merge was a squash.
    try parsed.expectPositionals(postMerge ? 0...1 : 4...4)
    files = parsed.positionals
  }

  func run(in context: CommandContext) throws -> Int32 {
    if postMerge { try Store.undoPullBringingBadConfig(at: context.directory) }
    let store = try context.openStore()
    if postMerge {
      for path in try store.reconcileGitMerge() {
        Output.error("folio: replayed \(path) as 'folio sync' would; the merge commit now holds it")
      }
      return 0
    }
    let clean = try store.runMergeDriver(
      basePath: files[0], oursPath: files[1], theirsPath: files[2], path: files[3])
    if !clean { Output.error("error: folio could not merge \(files[3]); kept our version") }
    return clean ? 0 : 1
  }
}
