import FolioJSON

/// One change that a mutation made, as returned by every mutation.
///
/// The path is a ``FieldPath`` in text form; an empty path means the whole
/// document.
public enum UpdateResult: Sendable, Hashable {
  /// A value was assigned.
  case set(pk: String, path: String, value: JSONValue)
  /// A path was unset, or the whole document removed (path `""`).
  case removed(pk: String, path: String)
  /// An integer was incremented by `by` (decimal text).
  case incremented(pk: String, path: String, by: String)
  /// `values` were appended to an array (only those it did not hold).
  case unioned(pk: String, path: String, values: [JSONValue])
  /// `values` were dropped from an array (only those it held).
  case removedMembers(pk: String, path: String, values: [JSONValue])

  /// The pk of the document changed.
  public var pk: String {
    switch self {
    case .set(let pk, _, _), .removed(let pk, _), .incremented(let pk, _, _),
      .unioned(let pk, _, _), .removedMembers(let pk, _, _):
      pk
    }
  }

  /// The JSON form printed by `folio apply`: `{"type":…,"pk":…,"path":…,…}`.
  public var json: JSONValue {
    switch self {
    case .set(let pk, let path, let value):
      ["type": "set", "pk": .string(pk), "path": .string(path), "value": value]
    case .removed(let pk, let path):
      ["type": "removed", "pk": .string(pk), "path": .string(path)]
    case .incremented(let pk, let path, let by):
      ["type": "incremented", "pk": .string(pk), "path": .string(path), "by": .number(by)]
    case .unioned(let pk, let path, let values):
      ["type": "unioned", "pk": .string(pk), "path": .string(path), "values": .array(values)]
    case .removedMembers(let pk, let path, let values):
      ["type": "removedMembers", "pk": .string(pk), "path": .string(path), "values": .array(values)]
    }
  }
}
