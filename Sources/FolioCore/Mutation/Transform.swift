import FolioJSON
import FolioSystem

/// A change to one column that merges rather than overwrites (the transform rules, docs/architecture.md).
///
/// Transforms ride on an update: the assignments apply first and the
/// transforms on top of the result. In the JSON form accepted by
/// ``Store/apply(table:pk:op:columns:transforms:)-(_,_,_,JSONObject,_)`` they read:
///
/// ```json
/// {"op": "increment", "by": 1}
/// {"op": "arrayUnion", "values": ["offline"]}
/// {"op": "arrayRemove", "values": ["draft"]}
/// ```
public enum Transform: Sendable, Hashable {
  /// Adds to an integer (the transform rules: "a missing or null column counts as 0").
  case increment(DecimalInteger)
  /// Appends each value the array does not already hold.
  case arrayUnion([JSONValue])
  /// Drops every member equal to one of the values.
  case arrayRemove([JSONValue])

  /// Reads a transform from its JSON form, applying every check of the
  /// transform rules.
  /// - Parameter column: the column the transform is for, named in errors.
  /// - Throws: `LOCAL_CONSTRAINT` when the entry is not an object, `op` is
  ///   missing or unknown, `by` is missing or not a signed integer, or
  ///   `values` is missing or not an array.
  public init(json: JSONValue, column: String) throws {
    func fail(_ message: String) -> FolioError {
      FolioError(.localConstraint, "transform for '\(column)' \(message)")
    }
    guard case .object(let object) = json else {
      throw fail("must be an object like {\"op\": \"increment\", \"by\": 1}, not \(json.kindName)")
    }
    guard let op = object["op"] else {
      throw fail("has no 'op'; expected increment, arrayUnion or arrayRemove")
    }
    guard case .string(let name) = op else {
      throw fail("has an 'op' that is \(op.kindName); expected increment, arrayUnion or arrayRemove")
    }
    switch name {
    case "increment":
      guard let by = object["by"] else {
        throw fail("has no 'by'; increment needs a signed integer, as a number or a decimal string")
      }
      switch by {
      case .null:
        // seed 002: "A by of null counts as zero"
        self = .increment(.zero)
      case .number(let text):
        guard let value = DecimalInteger(text) else {
          throw fail("has 'by' \(text), which is not a signed integer")
        }
        self = .increment(value)
      case .string(let text):
        guard let value = DecimalInteger(text) else {
          throw fail("has 'by' \"\(text)\", which is not a signed decimal integer")
        }
        self = .increment(value)
      default:
        throw fail("has 'by' that is \(by.kindName); expected a signed integer")
      }
    case "arrayUnion", "arrayRemove":
      guard let values = object["values"] else {
        throw fail("has no 'values'; \(name) needs an array of values")
      }
      guard case .array(let array) = values else {
        throw fail("has 'values' that is \(values.kindName); \(name) needs an array")
      }
      self = name == "arrayUnion" ? .arrayUnion(array) : .arrayRemove(array)
    default:
      throw fail("has unknown op '\(name)'; expected increment, arrayUnion or arrayRemove")
    }
  }

  /// The JSON form, as written to the op log.
  public var json: JSONValue {
    switch self {
    case .increment(let by):
      // Small amounts stay numbers; big ones keep every digit as a string.
      let amount: JSONValue =
        by.int32Value != nil ? .number(by.description) : .string(by.description)
      return ["op": "increment", "by": amount]
    case .arrayUnion(let values): return ["op": "arrayUnion", "values": .array(values)]
    case .arrayRemove(let values): return ["op": "arrayRemove", "values": .array(values)]
    }
  }

  /// The operation's name in the transform rules.
  public var name: String {
    switch self {
    case .increment: "increment"
    case .arrayUnion: "arrayUnion"
    case .arrayRemove: "arrayRemove"
    }
  }
}

extension JSONValue {
  /// The JSON form of an increment transform, for `apply(…transforms:)`.
  public static func increment(_ by: Int) -> JSONValue { Transform.increment(DecimalInteger(by)).json }

  /// The JSON form of an arrayUnion transform.
  public static func arrayUnion(_ values: [JSONValue]) -> JSONValue {
    Transform.arrayUnion(values).json
  }

  /// The JSON form of an arrayRemove transform.
  public static func arrayRemove(_ values: [JSONValue]) -> JSONValue {
    Transform.arrayRemove(values).json
  }
}
