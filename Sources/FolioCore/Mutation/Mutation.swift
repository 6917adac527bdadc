import FolioJSON

/// One atomic change to one document: insert, update, upsert or remove, with
/// its assignments, unsets and transforms.
///
/// Assignments apply first, then transforms on top (the transform rules, docs/architecture.md). No
/// assignment path lies inside another's, so their order does not matter.
public struct Mutation: Sendable, Hashable {
  /// What the mutation does to the document as a whole.
  public enum Kind: String, Sendable, Hashable, CaseIterable {
    /// Creates the document; fails if it exists. Transforms are validated,
    /// then ignored (the transform rules, docs/architecture.md).
    case insert
    /// Changes an existing document; does nothing if it is missing.
    case update
    /// Creates the document if it is missing, then updates it.
    case upsert
    /// Deletes the document; recorded, so it syncs.
    case remove
  }

  /// A value set at a path, or an unset when `value` is nil.
  public struct Assignment: Sendable, Hashable {
    /// Where.
    public var path: FieldPath
    /// The new value; nil unsets the path.
    public var value: JSONValue?
    /// Creates an assignment.
    public init(path: FieldPath, value: JSONValue?) {
      self.path = path
      self.value = value
    }
  }

  /// A transform at a path.
  public struct TransformEntry: Sendable, Hashable {
    /// Where.
    public var path: FieldPath
    /// What.
    public var transform: Transform
    /// Creates an entry.
    public init(path: FieldPath, transform: Transform) {
      self.path = path
      self.transform = transform
    }
  }

  /// The kind.
  public var kind: Kind
  /// Sets and unsets.
  public var assignments: [Assignment]
  /// Transforms, applied in order after the assignments.
  public var transforms: [TransformEntry]

  /// Creates a mutation.
  public init(kind: Kind, assignments: [Assignment] = [], transforms: [TransformEntry] = []) {
    self.kind = kind
    self.assignments = assignments
    self.transforms = transforms
  }

  /// Whether it changes nothing (an update with no assignments or transforms).
  public var isEmpty: Bool {
    (kind == .update || kind == .upsert) && assignments.isEmpty && transforms.isEmpty
  }
}
