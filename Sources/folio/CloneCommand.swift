import Folio
import Foundation

struct CloneCommand: Command {
  static let name = "clone"
  static let abstract = "Clone a store and set it up (git clone + folio init) in one step."
  static let usage = "folio clone URL [DIR] [--tables NAME,NAME…]"
  static let details = """
    ARGUMENTS:
      URL    Any git URL: file://, ssh:// or scp-like user@host:path, https, git://.
      DIR    Where to clone (default: the last part of URL, without .git).

    OPTIONS:
      --tables NAME,NAME…  A partial replica: fetch and check out only these tables. The others'
                           documents stay on the remote (git's partial clone, --filter=blob:none,
                           with sparse checkout); syncs bring only the held tables' changes, and
                           never record a change to the others. The remote's git server must
                           filter (uploadpack.allowFilter). See docs/sync.md.

    The clone runs the system git (2.31 or later), so credentials work as for git clone:
    credential helpers, ~/.ssh/config, the ssh agent, core.sshCommand, insteadOf. Also:
    FOLIO_SSH_KEY=/path/to/key (with FOLIO_SSH_PASSPHRASE when there is no terminal),
    and FOLIO_GIT_USERNAME with FOLIO_GIT_TOKEN for https. See docs/remotes.md.
    """

  var url: String
  var directory: String?
  var tables: [String]?

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments, options: ["--tables"])
    try parsed.expectPositionals(1...2)
    url = parsed.positionals[0]
    directory = parsed.positionals.count > 1 ? parsed.positionals[1] : nil
    if let list = parsed.value("--tables") {
      tables = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
        !$0.isEmpty
      }
      if tables!.isEmpty { throw UsageError("--tables takes table names, such as --tables todos,notes") }
    }
  }

  func run(in context: CommandContext) throws -> Int32 {
    // The last part of the path, as git picks it: after the last '/', or
    // after the ':' of an scp-like `host:repo.git`.
    var name = directory ?? String(url.split(whereSeparator: { $0 == "/" || $0 == ":" }).last ?? "store")
    if directory == nil && name.hasSuffix(".git") { name.removeLast(4) }
    let target = URL(fileURLWithPath: name, relativeTo: context.directory)
    let store = try Store.clone(url: url, into: target, mergeDriver: Executable.path, tables: tables)
    Output.print("cloned \(url) into \(store.root.path) (replica \(store.replicaID))")
    let absent = store.absentTables.map(\.name)
    if !absent.isEmpty {
      Output.print("partial replica: left on the remote: \(absent.joined(separator: ", "))")
    }
    return 0
  }
}
