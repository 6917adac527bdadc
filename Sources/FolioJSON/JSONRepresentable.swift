/// A Swift value that Folio can store as JSON: accepted wherever a value
/// goes in (columns, transforms, cursors, assignments in an update).
///
/// `Int`, the fixed-width integers, `Double`, `Float`, `Bool`, `String`,
/// ``JSONValue`` and ``JSONObject`` conform, and so do `Optional`, `Array`
/// and `Dictionary` (with `String` keys) of conforming values. A `Codable`
/// type of your own conforms with an empty extension, through
/// ``JSONValueEncoder``:
///
/// ```swift
/// struct Point: Codable, JSONRepresentable { var x: Int; var y: Int }
///
/// let title = "Milk"
/// let tags = ["home", "offline"]
/// try store.apply(table: "todos", pk: "a", op: .upsert,
///                 columns: ["title": title, "where": Point(x: 1, y: 2)],
///                 transforms: ["tags": .arrayUnion(tags)])
/// ```
///
/// Integers are written as JSON numbers here, every digit kept (a counter
/// grown by `increment` past 32 bits is stored as a decimal string by the
/// the transform rules; see ``JSONValueEncoder/IntegerEncoding-swift.enum`` for how a
/// whole `Codable` value is encoded).
public protocol JSONRepresentable {
  /// The value as JSON.
  /// - Throws: `INVALID_DOCUMENT` for a value JSON cannot hold (NaN, an
  ///   infinity), or an encoding error.
  var jsonValue: JSONValue { get throws }
}

extension JSONRepresentable where Self: Encodable {
  /// The value as ``JSONValueEncoder`` encodes it.
  public var jsonValue: JSONValue {
    get throws { try JSONValueEncoder().encode(self) }
  }
}

extension JSONValue: JSONRepresentable {
  /// The value itself.
  public var jsonValue: JSONValue { self }
}

extension JSONObject: JSONRepresentable {
  /// The object.
  public var jsonValue: JSONValue { .object(self) }
}

extension String: JSONRepresentable {
  /// A JSON string.
  public var jsonValue: JSONValue { .string(self) }
}

extension Substring: JSONRepresentable {
  /// A JSON string.
  public var jsonValue: JSONValue { .string(String(self)) }
}

extension Bool: JSONRepresentable {
  /// `true` or `false`.
  public var jsonValue: JSONValue { .bool(self) }
}

extension Double: JSONRepresentable {
  /// A JSON number in shortest round-trip form, as a float literal gives
  /// (`1.0` stays `1.0`).
  public var jsonValue: JSONValue {
    get throws { try JSONValueEncoder().double(self) }
  }
}

extension Float: JSONRepresentable {
  /// A JSON number.
  public var jsonValue: JSONValue {
    get throws { try JSONValueEncoder().double(Double(self)) }
  }
}

extension Int: JSONRepresentable {
  /// A JSON number.
  public var jsonValue: JSONValue { .number(String(self)) }
}

extension Int8: JSONRepresentable {
  /// A JSON number.
  public var jsonValue: JSONValue { .number(String(self)) }
}

extension Int16: JSONRepresentable {
  /// A JSON number.
  public var jsonValue: JSONValue { .number(String(self)) }
}

extension Int32: JSONRepresentable {
  /// A JSON number.
  public var jsonValue: JSONValue { .number(String(self)) }
}

extension Int64: JSONRepresentable {
  /// A JSON number, every digit kept.
  public var jsonValue: JSONValue { .number(String(self)) }
}

extension UInt: JSONRepresentable {
  /// A JSON number.
  public var jsonValue: JSONValue { .number(String(self)) }
}

extension UInt8: JSONRepresentable {
  /// A JSON number.
  public var jsonValue: JSONValue { .number(String(self)) }
}

extension UInt16: JSONRepresentable {
  /// A JSON number.
  public var jsonValue: JSONValue { .number(String(self)) }
}

extension UInt32: JSONRepresentable {
  /// A JSON number.
  public var jsonValue: JSONValue { .number(String(self)) }
}

extension UInt64: JSONRepresentable {
  /// A JSON number, every digit kept.
  public var jsonValue: JSONValue { .number(String(self)) }
}

extension Optional: JSONRepresentable where Wrapped: JSONRepresentable {
  /// The wrapped value, or `null`.
  public var jsonValue: JSONValue {
    get throws {
      guard let wrapped = self else { return .null }
      return try wrapped.jsonValue
    }
  }
}

extension Array: JSONRepresentable where Element: JSONRepresentable {
  /// A JSON array.
  public var jsonValue: JSONValue {
    get throws { .array(try map { try $0.jsonValue }) }
  }
}

extension Dictionary: JSONRepresentable where Key == String, Value: JSONRepresentable {
  /// A JSON object, members in key order.
  public var jsonValue: JSONValue {
    get throws {
      var object = JSONObject()
      for key in keys.sorted() { object[key] = try self[key]!.jsonValue }
      return .object(object)
    }
  }
}

extension JSONValue {
  /// The JSON form of `value`.
  ///
  /// ```swift
  /// let height = 1.75
  /// let json = try JSONValue(height)   // .number("1.75")
  /// ```
  public init(_ value: some JSONRepresentable) throws {
    self = try value.jsonValue
  }
}

extension Dictionary where Key == String, Value == any JSONRepresentable {
  /// The values as JSON, for APIs that take `[String: JSONValue]`.
  package func jsonValues() throws -> [String: JSONValue] {
    var result: [String: JSONValue] = [:]
    for (key, value) in self { result[key] = try value.jsonValue }
    return result
  }
}
