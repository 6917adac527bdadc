import FolioCore
import FolioJSON

/// Where a value in a document came from: the operation that set it, and
/// the commit that brought that operation into the history.
public struct BlameSource: Sendable, Equatable {
  /// What set the value.
  public enum Kind: String, Sendable {
    /// An insert, update or upsert assigned it (or, for the key and the
    /// values an insert wrote, created the document).
    case insert, update, upsert
    /// An increment transform; ``BlameSource/by`` says by how much.
    case increment
    /// A union transform added it (for a set's member), or last changed
    /// the set.
    case arrayUnion
    /// A remove-members transform last changed the set.
    case arrayRemove
    /// A bulk import wrote the document whole.
    case `import`
    /// No operation explains the value: the file was edited and committed
    /// without Folio recording it, or `folio compact` dropped the
    /// operations. ``BlameSource/commit`` is the commit that made the value.
    case edit
  }

  /// What set the value.
  public var kind: Kind
  /// The operation's stamp, which names its replica; nil for ``Kind/edit``.
  public var stamp: HLC?
  /// For an increment, the amount added.
  public var by: DecimalInteger?
  /// The commit that brought the operation (for ``Kind/edit``, that made
  /// the value); nil when it is not committed yet.
  public var commit: CommitInfo?

  /// Creates a source.
  public init(kind: Kind, stamp: HLC?, by: DecimalInteger? = nil, commit: CommitInfo?) {
    self.kind = kind
    self.stamp = stamp
    self.by = by
    self.commit = commit
  }

  /// The replica that wrote the operation.
  public var replica: String? { stamp?.replica }

  /// The source's members for an NDJSON line: `op`, `hlc`, `replica`,
  /// `by`, and the commit's `commit`, `author`, `email` and `date` (null
  /// when not committed).
  public var jsonMembers: [(String, JSONValue)] {
    var members: [(String, JSONValue)] = [("op", .string(kind.rawValue))]
    if let stamp {
      members += [("hlc", .string(stamp.description)), ("replica", .string(stamp.replica))]
    }
    if let by { members.append(("by", .number(by.description))) }
    members += commit?.jsonMembers ?? [("commit", .null)]
    return members
  }
}
