import FolioCore
import FolioSystem

/// Git's merge and diff drivers, the post-merge hook (``GitDrivers``), and
/// a stopped `git merge` (``StoppedGitMerge``).
extension Store {
  /// Registers Folio's git diff driver in `.git/config`, so `git diff`,
  /// `git show` and `git log -p` show a table document as one line per
  /// JSON path (``textconv(_:)``), routed by `.gitattributes` (`diff=folio`).
  /// Running it again changes nothing.
  /// - Parameter program: the `folio` executable (default: `folio` on PATH).
  public func registerDiffDriver(program: String = "folio") throws {
    try GitDrivers(store: self).registerDiffDriver(program: program)
  }

  /// A document as git's diff driver shows it: one `path = value` line per
  /// leaf (`/title = "Buy milk"`), in path order, so a line diff of two
  /// versions is a diff by path. Values are compact JSON; arrays and `{}`
  /// are leaves. Bytes that are not a JSON object come back as they are.
  public static func textconv(_ bytes: [UInt8]) -> [UInt8] {
    GitDrivers.textconv(bytes)
  }

  /// Registers Folio's merge driver in `.git/config`, so `git merge` and
  /// `git pull` resolve table documents by replay, and a `post-merge` hook
  /// that finishes the merges the driver never sees (see
  /// ``reconcileGitMerge()``).
  ///
  /// A `post-merge` hook of the user's own (in `core.hooksPath` if set) is
  /// kept: it moves to `post-merge.user` (`post-merge.user.2`, … if that is
  /// taken by another one), and Folio's hook runs each of them after its own
  /// work, with the same arguments. It registers the diff driver too
  /// (``registerDiffDriver(program:)``). Running it again changes nothing.
  /// - Parameter program: the `folio` executable (default: `folio` on PATH).
  public func registerMergeDriver(program: String = "folio") throws {
    try GitDrivers(store: self).registerMergeDriver(program: program)
  }

  /// Finishes a merge made by plain `git merge` or `git pull`, so that it
  /// holds the same documents `folio sync` would have written: the
  /// `post-merge` hook's entry point.
  ///
  /// git runs the merge driver only for files that both sides changed. A
  /// document can have ops on both sides while only one side's file changed
  /// (say, a union of a member already there), and replaying both sides'
  /// ops can then give another document than the changed side's. This
  /// replays the merge the way `sync` does and, where a table document
  /// differs, rewrites HEAD's merge commit (same parents and message) and
  /// the working tree. Other files keep git's result.
  /// - Returns: the document paths that were rewritten.
  @discardableResult
  public func reconcileGitMerge() throws -> [String] {
    try GitDrivers(store: self).reconcileGitMerge()
  }

  /// The git merge driver (`folio merge-driver %O %A %B %P`): merges the
  /// three versions of a table document or op log, writing the result over
  /// `ours`, as git expects.
  ///
  /// A document is resolved exactly as `folio sync` resolves it, from the op
  /// logs of HEAD and the commit being merged, when git says which that is
  /// (`MERGE_HEAD`, or the `GITHEAD_<id>` variables `git merge` sets). Without
  /// one, the three versions are diffed into synthetic ops through the column
  /// kinds.
  /// - Returns: whether the merge is clean. When it is not, `ours` is left
  ///   untouched, so no conflict markers ever land in a table file.
  public func runMergeDriver(basePath: String, oursPath: String, theirsPath: String, path: String) throws
    -> Bool
  {
    try GitDrivers(store: self).runMergeDriver(
      basePath: basePath, oursPath: oursPath, theirsPath: theirsPath, path: path)
  }

  /// The commit a stopped `git merge` or `git pull` was merging, as hex,
  /// when one waits for ``commit(message:)-93boo`` (`folio commit`) to conclude
  /// it by replay; nil when no merge is under way.
  public var stoppedGitMerge: String? {
    (try? StoppedGitMerge(store: self).pending())?.map { $0.description }
  }
}
