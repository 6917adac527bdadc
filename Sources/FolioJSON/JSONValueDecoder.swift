import Foundation

/// Decodes any `Decodable` value from a ``JSONValue``, with no JSON text in
/// between, and with numbers read from their exact literal text: an `Int64`
/// of 9_007_199_254_740_993 (past 2^53, where a `Double` would round) comes
/// back to the digit.
///
/// ```swift
/// struct Todo: Codable { var id: String; var title: String; var views: Int }
/// let doc: JSONValue = ["id": "a", "title": "Milk", "views": "5000000000"]
/// let todo = try JSONValueDecoder().decode(Todo.self, from: doc)
/// todo.views   // 5000000000
/// ```
///
/// **Integers** are read from a JSON integer number, or from a decimal
/// string (the transform rules store a counter past the 32-bit range as one), so
/// a field `views: Int` reads both forms; a number with a fraction or
/// exponent is accepted only when its value is a whole number that fits.
/// **Dates** are read per ``JSONValueEncoder/DateEncoding-swift.enum``, by
/// default integer milliseconds since 1970. A missing key and `null` both
/// decode as nil for an optional.
///
/// Errors are Swift's `DecodingError`s, with the coding path.
public struct JSONValueDecoder: Sendable {
  /// How dates are read; by default milliseconds since 1970.
  public var dateDecoding: JSONValueEncoder.DateEncoding = .millisecondsSince1970

  /// A decoder with the default strategies.
  public init() {}

  /// Decodes a `T` from `value`.
  /// - Throws: `DecodingError` naming the coding path of the mismatch.
  public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
    try DecoderImpl(options: self, value: value, codingPath: []).decodeValue(T.self)
  }
}

private struct DecoderImpl: Decoder {
  let options: JSONValueDecoder
  let value: JSONValue
  let codingPath: [any CodingKey]
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard case .object(let object) = value else { throw mismatch(JSONObject.self) }
    return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, object: object))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard case .array(let array) = value else { throw mismatch([JSONValue].self) }
    return UnkeyedContainer(decoder: self, array: array)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleContainer(decoder: self) }

  func mismatch(_ type: Any.Type, _ what: String? = nil) -> DecodingError {
    .typeMismatch(
      type,
      .init(
        codingPath: codingPath,
        debugDescription: what ?? "expected \(type), found \(value.kindName)"))
  }

  func child(_ value: JSONValue, _ key: any CodingKey) -> DecoderImpl {
    DecoderImpl(options: options, value: value, codingPath: codingPath + [key])
  }

  /// Decodes `T` from this decoder's value: Folio's and Foundation's
  /// special types directly, scalars from their exact text, anything else
  /// through its own `init(from:)`.
  func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
    if let special = try special(type) { return special as! T }
    if let scalar = try scalar(type) { return scalar as! T }
    return try T(from: self)
  }

  private func special<T>(_ type: T.Type) throws -> Any? {
    if type == JSONValue.self { return value }
    if type == JSONObject.self {
      guard case .object(let object) = value else { throw mismatch(type) }
      return object
    }
    if type == Date.self { return try date() }
    if type == URL.self {
      guard case .string(let text) = value, let url = URL(string: text) else { throw mismatch(type) }
      return url
    }
    if type == Data.self {
      guard case .string(let text) = value, let data = Data(base64Encoded: text) else {
        throw mismatch(type, "expected base64 text, found \(value.kindName)")
      }
      return data
    }
    if type == Decimal.self {
      guard let text = numberOrDecimalText, let decimal = Decimal(string: text) else { throw mismatch(type) }
      return decimal
    }
    return nil
  }

  /// The exact text of a number, or of a string holding a decimal integer.
  private var numberOrDecimalText: String? {
    switch value {
    case .number(let text): return text
    case .string(let text) where isDecimalIntegerText(text): return text
    default: return nil
    }
  }

  private func date() throws -> Date {
    switch options.dateDecoding {
    case .millisecondsSince1970:
      return Date(timeIntervalSince1970: try double() / 1000)
    case .secondsSince1970:
      return Date(timeIntervalSince1970: try double())
    case .deferredToDate:
      return Date(timeIntervalSinceReferenceDate: try double())
    case .iso8601:
      guard case .string(let text) = value else { throw mismatch(Date.self) }
      // With or without fractional seconds.
      guard
        let date = JSONValueEncoder.iso8601().date(from: text)
          ?? JSONValueEncoder.iso8601(fractionalSeconds: false).date(from: text)
      else {
        throw mismatch(Date.self, "expected an ISO 8601 date, found \"\(text)\"")
      }
      return date
    }
  }

  func double() throws -> Double {
    guard case .number(let text) = value, let double = Double(text) else { throw mismatch(Double.self) }
    return double
  }

  func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
    let text: String
    switch value {
    case .number(let t): text = t
    // seed 002: a counter past the 32-bit range is stored as a decimal string.
    case .string(let t) where isDecimalIntegerText(t): text = t
    default: throw mismatch(type)
    }
    if let exact = T(text) { return exact }
    if isDecimalIntegerText(text) {
      throw DecodingError.dataCorrupted(
        .init(codingPath: codingPath, debugDescription: "\(text) does not fit in \(T.self)"))
    }
    // 1.0 or 1e3: accepted when the value is whole and fits.
    guard let double = Double(text), let exact = T(exactly: double) else {
      throw mismatch(type, "expected an integer, found \(text)")
    }
    return exact
  }

  func scalar<T>(_ type: T.Type) throws -> Any? {
    switch type {
    case is Bool.Type:
      guard case .bool(let bool) = value else { throw mismatch(type) }
      return bool
    case is String.Type:
      guard case .string(let string) = value else { throw mismatch(type) }
      return string
    case is Double.Type: return try double()
    case is Float.Type: return Float(try double())
    case is Int.Type: return try integer(Int.self)
    case is Int8.Type: return try integer(Int8.self)
    case is Int16.Type: return try integer(Int16.self)
    case is Int32.Type: return try integer(Int32.self)
    case is Int64.Type: return try integer(Int64.self)
    case is UInt.Type: return try integer(UInt.self)
    case is UInt8.Type: return try integer(UInt8.self)
    case is UInt16.Type: return try integer(UInt16.self)
    case is UInt32.Type: return try integer(UInt32.self)
    case is UInt64.Type: return try integer(UInt64.self)
    default: return nil
    }
  }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: DecoderImpl
  let object: JSONObject
  var codingPath: [any CodingKey] { decoder.codingPath }
  var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

  func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

  private func child(_ key: Key) throws -> DecoderImpl {
    guard let value = object[key.stringValue] else {
      throw DecodingError.keyNotFound(
        key, .init(codingPath: codingPath, debugDescription: "no member '\(key.stringValue)'"))
    }
    return decoder.child(value, key)
  }

  func decodeNil(forKey key: Key) throws -> Bool { (object[key.stringValue] ?? .null).isNull }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try child(key).decodeValue(type)
  }

  // A missing key and null both mean nil.
  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    guard let value = object[key.stringValue], !value.isNull else { return nil }
    return try decoder.child(value, key).decodeValue(type)
  }

  func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    try child(key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try child(key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    decoder.child(object["super"] ?? .null, AnyKey("super"))
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    decoder.child(object[key.stringValue] ?? .null, key)
  }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
  let decoder: DecoderImpl
  let array: [JSONValue]
  var codingPath: [any CodingKey] { decoder.codingPath }
  var count: Int? { array.count }
  var isAtEnd: Bool { currentIndex >= array.count }
  var currentIndex = 0

  init(decoder: DecoderImpl, array: [JSONValue]) {
    self.decoder = decoder
    self.array = array
  }

  private mutating func next(_ type: Any.Type) throws -> DecoderImpl {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        type, .init(codingPath: codingPath + [AnyKey(index: currentIndex)], debugDescription: "array ended"))
    }
    defer { currentIndex += 1 }
    return decoder.child(array[currentIndex], AnyKey(index: currentIndex))
  }

  mutating func decodeNil() throws -> Bool {
    guard !isAtEnd, array[currentIndex].isNull else { return false }
    currentIndex += 1
    return true
  }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type).decodeValue(type) }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    try next(JSONObject.self).container(keyedBy: type)
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try next([JSONValue].self).unkeyedContainer()
  }

  mutating func superDecoder() throws -> any Decoder { try next(JSONValue.self) }
}

private struct SingleContainer: SingleValueDecodingContainer {
  let decoder: DecoderImpl
  var codingPath: [any CodingKey] { decoder.codingPath }

  func decodeNil() -> Bool { decoder.value.isNull }
  func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(type) }
}

/// Whether `text` is `-?[0-9]+`, the decimal-string form of a big counter.
func isDecimalIntegerText(_ text: String) -> Bool {
  var utf8 = text.utf8[...]
  if utf8.first == UInt8(ascii: "-") { utf8 = utf8.dropFirst() }
  return !utf8.isEmpty && utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
}
