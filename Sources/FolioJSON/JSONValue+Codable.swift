/// `JSONValue` is `Codable`, so a struct may hold free-form JSON in a field
/// (`var extra: JSONValue`). With Folio's own ``JSONValueEncoder`` and
/// ``JSONValueDecoder`` the value passes through as is, numbers and all;
/// with another coder (Foundation's `JSONEncoder`), numbers go through
/// `Int64`, `UInt64` or `Double`, and text that none holds exactly is
/// rejected rather than rounded.
extension JSONValue: Codable {
  /// Reads any JSON value.
  ///
  /// ```swift
  /// let value = try JSONValueDecoder().decode(JSONValue.self, from: ["a": 1])
  /// ```
  public init(from decoder: any Decoder) throws {
    if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
      var object = JSONObject()
      for key in keyed.allKeys { object[key.stringValue] = try keyed.decode(JSONValue.self, forKey: key) }
      self = .object(object)
      return
    }
    if var unkeyed = try? decoder.unkeyedContainer() {
      var array: [JSONValue] = []
      while !unkeyed.isAtEnd { array.append(try unkeyed.decode(JSONValue.self)) }
      self = .array(array)
      return
    }
    let single = try decoder.singleValueContainer()
    if single.decodeNil() {
      self = .null
    } else if let bool = try? single.decode(Bool.self) {
      self = .bool(bool)
    } else if let integer = try? single.decode(Int64.self) {
      self = .number(String(integer))
    } else if let integer = try? single.decode(UInt64.self) {
      self = .number(String(integer))
    } else if let double = try? single.decode(Double.self) {
      self = try JSONValueEncoder().double(double)
    } else {
      self = .string(try single.decode(String.self))
    }
  }

  /// Writes the value.
  ///
  /// ```swift
  /// let value = try JSONValueEncoder().encode(["a": 1] as JSONValue)
  /// ```
  public func encode(to encoder: any Encoder) throws {
    switch self {
    case .null:
      var single = encoder.singleValueContainer()
      try single.encodeNil()
    case .bool(let bool):
      var single = encoder.singleValueContainer()
      try single.encode(bool)
    case .number(let text):
      var single = encoder.singleValueContainer()
      if let integer = Int64(text) {
        try single.encode(integer)
      } else if let integer = UInt64(text) {
        try single.encode(integer)
      } else if !isIntegerLiteral, let double = Double(text) {
        try single.encode(double)
      } else {
        throw EncodingError.invalidValue(
          self,
          .init(
            codingPath: encoder.codingPath,
            debugDescription: "\(text) has no exact Swift number type; use JSONValueEncoder to keep it"))
      }
    case .string(let string):
      var single = encoder.singleValueContainer()
      try single.encode(string)
    case .array(let array):
      var unkeyed = encoder.unkeyedContainer()
      for element in array { try unkeyed.encode(element) }
    case .object(let object):
      var keyed = encoder.container(keyedBy: AnyKey.self)
      for (key, value) in object { try keyed.encode(value, forKey: AnyKey(key)) }
    }
  }
}

extension JSONValue {
  /// The JSON value of `value`, through ``JSONValueEncoder`` (default
  /// strategies: see there).
  ///
  /// ```swift
  /// struct Todo: Codable { var id: String; var tags: [String] }
  /// let json = try JSONValue(encoding: Todo(id: "a", tags: ["home"]))
  /// ```
  public init(encoding value: some Encodable) throws {
    self = try JSONValueEncoder().encode(value)
  }

  /// Decodes a `T` from this value through ``JSONValueDecoder``.
  ///
  /// ```swift
  /// let todo = try json.decode(Todo.self)
  /// ```
  /// - Throws: `DecodingError` naming the coding path of the mismatch.
  public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
    try JSONValueDecoder().decode(type, from: self)
  }
}
