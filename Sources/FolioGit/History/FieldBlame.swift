import FolioCore
import FolioJSON

/// One leaf of a document, with where its value came from.
///
/// A leaf is a value that is not a non-empty object: a scalar, an array,
/// or `{}`. For a counter column, ``increments`` says who added what since
/// the value was last assigned; for a set column, ``members`` says who
/// added each member.
public struct FieldBlame: Sendable, Equatable {
  /// One member of a set, with the operation that added it.
  public struct Member: Sendable, Equatable {
    /// The member.
    public var value: JSONValue
    /// The union (or assignment of the whole set) that put it there.
    public var source: BlameSource

    /// Creates a member's blame.
    public init(value: JSONValue, source: BlameSource) {
      self.value = value
      self.source = source
    }
  }

  /// The JSON pointer of the leaf (`/title`, `/address/city`).
  public var path: String
  /// The value now.
  public var value: JSONValue
  /// The operation that last set or changed the value.
  public var source: BlameSource
  /// For a counter column: the assignment the increments count from, nil
  /// when the counter started from nothing (0).
  public var assignment: BlameSource?
  /// For a counter column: the increments since the last assignment,
  /// oldest first; nil for other columns.
  public var increments: [BlameSource]?
  /// For a set column: each member, in the set's order; nil for other
  /// columns.
  public var members: [Member]?

  /// Creates a leaf's blame.
  public init(
    path: String, value: JSONValue, source: BlameSource, assignment: BlameSource? = nil,
    increments: [BlameSource]? = nil, members: [Member]? = nil
  ) {
    self.path = path
    self.value = value
    self.source = source
    self.assignment = assignment
    self.increments = increments
    self.members = members
  }

  /// The leaf as one NDJSON line's object: `path`, `value`, the source's
  /// members (``BlameSource/jsonMembers``), and `increments` or `members`
  /// where they apply, each with its own source.
  public func json(table: String, pk: String) -> JSONValue {
    var members: [(String, JSONValue)] = [
      ("table", .string(table)), ("pk", .string(pk)), ("path", .string(path)), ("value", value),
    ]
    members += source.jsonMembers
    if let increments {
      if let assignment { members.append(("assignment", .object(JSONObject(assignment.jsonMembers)))) }
      members.append(("increments", .array(increments.map { .object(JSONObject($0.jsonMembers)) })))
    }
    if let setMembers = self.members {
      members.append(
        (
          "members",
          .array(setMembers.map { .object(JSONObject([("value", $0.value)] + $0.source.jsonMembers)) })
        ))
    }
    return .object(JSONObject(members))
  }
}
