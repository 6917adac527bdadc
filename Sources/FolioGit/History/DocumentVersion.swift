import FolioCore
import FolioJSON

/// One version of a document in the store's history: the commit that made
/// it, the document as that commit holds it, and what changed.
public struct DocumentVersion: Sendable {
  /// The commit that made this version: the first to hold it on its line
  /// of history, a replay merge included.
  public var commit: CommitInfo
  /// The document as the commit holds it; nil when the commit removed it.
  public var document: Document?
  /// The changes from the version the commit's first parent held, path by
  /// path (all of the document when the parent had none).
  public var changes: [DocumentChange]

  /// Creates a version.
  public init(commit: CommitInfo, document: Document?, changes: [DocumentChange]) {
    self.commit = commit
    self.document = document
    self.changes = changes
  }

  /// The version as one NDJSON line's object: `commit`, `date`, `author`,
  /// `email`, `summary`, and `value` (null when removed); with `diff`, the
  /// changes in place of the value, each as `folio diff` gives it.
  public func json(diff: Bool) -> JSONValue {
    var members = commit.jsonMembers + [("summary", .string(commit.summary))]
    if diff {
      members.append(("changes", .array(changes.map(\.json))))
    } else {
      members.append(("value", document.map { .object($0.value) } ?? .null))
    }
    return .object(JSONObject(members))
  }
}
