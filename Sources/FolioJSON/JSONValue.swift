/// A JSON value, as Folio reads and writes it.
///
/// Numbers keep their literal text, so a document read and written again is
/// unchanged, whatever its precision. Objects keep the order of their members
/// as read; the canonical writer sorts them.
///
/// Two values are equal when their canonical JSON forms are equal: objects
/// compare regardless of member order, numbers by their literal text, and
/// strings by their exact Unicode scalars.
///
/// ```swift
/// let doc: JSONValue = ["id": "3f2a", "views": 1, "tags": ["a"]]
/// print(doc.canonicalString)
/// ```
public enum JSONValue: Sendable {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number, as its literal JSON text (for example `"-12"`, `"1.5e3"`).
  case number(String)
  /// A string.
  case string(String)
  /// An array.
  case array([JSONValue])
  /// An object, with members in the order they were read or added.
  case object(JSONObject)
}

extension JSONValue {
  /// A number value from an integer.
  public static func integer<T: BinaryInteger>(_ value: T) -> JSONValue {
    .number(String(value))
  }

  /// Whether this is `null`.
  public var isNull: Bool {
    if case .null = self { return true }
    return false
  }

  /// The object, if this is one.
  public var objectValue: JSONObject? {
    if case .object(let object) = self { return object }
    return nil
  }

  /// The array, if this is one.
  public var arrayValue: [JSONValue]? {
    if case .array(let array) = self { return array }
    return nil
  }

  /// The string, if this is one.
  public var stringValue: String? {
    if case .string(let string) = self { return string }
    return nil
  }

  /// The Bool, if this is one.
  public var boolValue: Bool? {
    if case .bool(let bool) = self { return bool }
    return nil
  }

  /// The literal text of a number, if this is one.
  public var numberText: String? {
    if case .number(let text) = self { return text }
    return nil
  }

  /// The number as an `Int`, if it is an integer literal that fits.
  public var intValue: Int? {
    if case .number(let text) = self { return Int(text) }
    return nil
  }

  /// The number as a `Double`, if this is a number.
  public var doubleValue: Double? {
    if case .number(let text) = self { return Double(text) }
    return nil
  }

  /// A short name for the kind of value, for messages.
  public var kindName: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }

  /// The member named `key`, if this is an object that has it.
  public subscript(key: String) -> JSONValue? {
    objectValue?[key]
  }
}

extension JSONValue: ExpressibleByNilLiteral {
  /// `null`.
  public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
  /// A Bool.
  public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
  /// An integer number.
  public init(integerLiteral value: Int) { self = .number(String(value)) }
}

extension JSONValue: ExpressibleByFloatLiteral {
  /// A number from a `Double`, written in its shortest round-trip form.
  public init(floatLiteral value: Double) {
    precondition(value.isFinite, "JSON has no NaN or Infinity")
    self = .number(String(value))
  }
}

extension JSONValue: ExpressibleByStringLiteral {
  /// A string.
  public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
  /// An array.
  public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
  /// An object, with members in the order written.
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self = .object(JSONObject(elements))
  }
}
