import FolioSystem
import Foundation

/// Encodes any `Encodable` value to a ``JSONValue``, with no JSON text in
/// between (Foundation's `JSONEncoder` would print and Folio would parse
/// again).
///
/// ```swift
/// struct Todo: Codable { var id: String; var title: String; var views: Int }
/// let value = try JSONValueEncoder().encode(Todo(id: "a", title: "Milk", views: 1))
/// value["views"]   // .number("1")
/// ```
///
/// **Integers** follow the transform rules, which stores a counter past the 32-bit
/// signed range as a decimal string: with the default
/// ``IntegerEncoding-swift.enum/counter``, an `Int` of 3 is written as `3` and
/// one of 5_000_000_000 as `"5000000000"`, exactly as `increment` would have
/// left it, so a value read and written back keeps its JSON type. Choose
/// ``IntegerEncoding-swift.enum/number`` for integers that are not counters
/// and must stay JSON numbers (ids, or millisecond timestamps kept in an
/// `Int`); every digit is kept either way. ``JSONValueDecoder`` reads both
/// forms.
///
/// **Dates** are written as integer milliseconds since 1970 by default (a
/// JSON number, so they order and compare as numbers in queries); see
/// ``DateEncoding-swift.enum``.
///
/// **Optionals** that are nil are written as `null` by default, so that an
/// upsert of a value whose field became nil clears the column instead of
/// leaving the old value; ``NilEncoding-swift.enum/omit`` leaves the key out.
public struct JSONValueEncoder: Sendable {
  /// How integers are written.
  public enum IntegerEncoding: Sendable, Hashable {
    /// Seed `002_*`'s counter rule: a number inside the 32-bit signed range,
    /// a decimal string outside it.
    case counter
    /// Always a JSON number, with every digit.
    case number
  }

  /// How `Date` values are written.
  public enum DateEncoding: Sendable, Hashable {
    /// Integer milliseconds since 1970-01-01T00:00:00Z, a JSON number
    /// (rounded to the nearest millisecond).
    case millisecondsSince1970
    /// Seconds since 1970 as a JSON number, fraction kept.
    case secondsSince1970
    /// An ISO 8601 string with milliseconds, in UTC:
    /// `2024-05-01T12:00:00.000Z`.
    case iso8601
    /// The `Date`'s own `Encodable` (seconds since 2001 as a number).
    case deferredToDate
  }

  /// How nil optionals are written.
  public enum NilEncoding: Sendable, Hashable {
    /// As `null`.
    case null
    /// Left out.
    case omit
  }

  /// How integers are written; by default the transform rules' counter form.
  public var integerEncoding: IntegerEncoding = .counter
  /// How dates are written; by default milliseconds since 1970.
  public var dateEncoding: DateEncoding = .millisecondsSince1970
  /// How nil optionals in keyed containers are written; by default `null`.
  public var nilEncoding: NilEncoding = .null

  /// An encoder with the default strategies.
  public init() {}

  /// The JSON value of `value`.
  /// - Throws: `INVALID_DOCUMENT` for a non-finite floating-point number, or
  ///   a value that encodes nothing; any error `value`'s `encode(to:)` throws.
  public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
    if let direct = try JSONValueEncoder.direct(value, options: self) { return direct }
    let encoder = EncoderImpl(options: self, codingPath: [])
    try value.encode(to: encoder)
    guard let result = encoder.box.value else {
      throw FolioError(.invalidDocument, "\(T.self) encoded no value")
    }
    return result
  }

  /// Values encoded without going through their `encode(to:)`: Folio's own
  /// types, and the Foundation types whose Codable form is not what a JSON
  /// document should hold.
  static func direct(_ value: Any, options: JSONValueEncoder) throws -> JSONValue? {
    switch value {
    case let json as JSONValue: return json
    case let object as JSONObject: return .object(object)
    case let date as Date: return try options.encodeDate(date)
    case let url as URL: return .string(url.absoluteString)
    case let data as Data: return .string(data.base64EncodedString())
    case let decimal as Decimal:
      guard decimal.isFinite else { throw nonFinite(decimal.description) }
      return .number(decimal.description)
    default: return nil
    }
  }

  func encodeDate(_ date: Date) throws -> JSONValue {
    switch dateEncoding {
    case .millisecondsSince1970:
      let ms = (date.timeIntervalSince1970 * 1000).rounded()
      guard let integer = Int64(exactly: ms) else { throw JSONValueEncoder.nonFinite("\(date)") }
      return .number(String(integer))
    case .secondsSince1970:
      return try double(date.timeIntervalSince1970)
    case .iso8601:
      return .string(JSONValueEncoder.iso8601().string(from: date))
    case .deferredToDate:
      return try double(date.timeIntervalSinceReferenceDate)
    }
  }

  /// A new ISO 8601 formatter with milliseconds (one per call: formatters
  /// are not documented as thread-safe on every platform).
  static func iso8601(fractionalSeconds: Bool = true) -> ISO8601DateFormatter {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions =
      fractionalSeconds ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
    return formatter
  }

  func integer<T: BinaryInteger>(_ value: T) -> JSONValue {
    // seed 002: "the stored result switches to a string past the 32-bit range"
    if integerEncoding == .counter && Int32(exactly: value) == nil { return .string(String(value)) }
    return .number(String(value))
  }

  func double(_ value: Double) throws -> JSONValue {
    guard value.isFinite else { throw JSONValueEncoder.nonFinite(String(value)) }
    // Swift's shortest round-trip text, as a float literal gives (1.0 stays
    // "1.0": seed 002 compares array members by their JSON text).
    return .number(String(value))
  }

  static func nonFinite(_ text: String) -> FolioError {
    FolioError(.invalidDocument, "JSON has no \(text): only finite numbers can be stored")
  }
}

/// Where one encoded value lands: a slot the containers fill in.
private final class Box {
  enum Content {
    case empty
    case value(JSONValue)
    case object([(key: String, box: Box)])
    case array([Box])
  }
  var content: Content = .empty

  var value: JSONValue? {
    switch content {
    case .empty: return nil
    case .value(let value): return value
    case .object(let members):
      var object = JSONObject()
      for member in members {
        if let value = member.box.value { object[member.key] = value }
      }
      return .object(object)
    case .array(let boxes):
      return .array(boxes.map { $0.value ?? .null })
    }
  }

  /// The member box for `key`, made if new (a repeated key replaces).
  func member(_ key: String) -> Box {
    if case .empty = content { content = .object([]) }
    guard case .object(var members) = content else {
      preconditionFailure("a keyed container over a value that is not an object")
    }
    let box = Box()
    if let i = members.firstIndex(where: { $0.key == key }) {
      members[i].box = box
    } else {
      members.append((key, box))
    }
    content = .object(members)
    return box
  }

  /// A new box at the end of the array.
  func append() -> Box {
    if case .empty = content { content = .array([]) }
    guard case .array(var boxes) = content else {
      preconditionFailure("an unkeyed container over a value that is not an array")
    }
    let box = Box()
    boxes.append(box)
    content = .array(boxes)
    return box
  }

  var arrayCount: Int {
    if case .array(let boxes) = content { return boxes.count }
    return 0
  }
}

private struct EncoderImpl: Encoder {
  let options: JSONValueEncoder
  let codingPath: [any CodingKey]
  let box: Box
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  init(options: JSONValueEncoder, codingPath: [any CodingKey], box: Box = Box()) {
    self.options = options
    self.codingPath = codingPath
    self.box = box
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    if case .empty = box.content { box.content = .object([]) }
    return KeyedEncodingContainer(KeyedContainer<Key>(encoder: self))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    if case .empty = box.content { box.content = .array([]) }
    return UnkeyedContainer(encoder: self)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer { SingleContainer(encoder: self) }

  /// Encodes `value` into `box`: directly when it is a plain value, else
  /// through its own `encode(to:)`.
  func encode<T: Encodable>(_ value: T, into box: Box, key: (any CodingKey)?) throws {
    if let direct = try JSONValueEncoder.direct(value, options: options) {
      box.content = .value(direct)
      return
    }
    let path = key.map { codingPath + [$0] } ?? codingPath
    try value.encode(to: EncoderImpl(options: options, codingPath: path, box: box))
  }

  func scalar(_ value: Any) throws -> JSONValue {
    switch value {
    case let v as Bool: return .bool(v)
    case let v as String: return .string(v)
    case let v as Double: return try options.double(v)
    case let v as Float: return try options.double(Double(v))
    case let v as Int: return options.integer(v)
    case let v as Int8: return options.integer(v)
    case let v as Int16: return options.integer(v)
    case let v as Int32: return options.integer(v)
    case let v as Int64: return options.integer(v)
    case let v as UInt: return options.integer(v)
    case let v as UInt8: return options.integer(v)
    case let v as UInt16: return options.integer(v)
    case let v as UInt32: return options.integer(v)
    case let v as UInt64: return options.integer(v)
    default: preconditionFailure("not a scalar: \(type(of: value))")
    }
  }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let encoder: EncoderImpl
  var codingPath: [any CodingKey] { encoder.codingPath }

  mutating func encodeNil(forKey key: Key) throws {
    encoder.box.member(key.stringValue).content = .value(.null)
  }
  mutating func encode(_ value: Bool, forKey key: Key) throws { try put(value, key) }
  mutating func encode(_ value: String, forKey key: Key) throws { try put(value, key) }
  mutating func encode(_ value: Double, forKey key: Key) throws { try put(value, key) }
  mutating func encode(_ value: Float, forKey key: Key) throws { try put(value, key) }
  mutating func encode(_ value: Int, forKey key: Key) throws { try put(value, key) }
  mutating func encode(_ value: Int8, forKey key: Key) throws { try put(value, key) }
  mutating func encode(_ value: Int16, forKey key: Key) throws { try put(value, key) }
  mutating func encode(_ value: Int32, forKey key: Key) throws { try put(value, key) }
  mutating func encode(_ value: Int64, forKey key: Key) throws { try put(value, key) }
  mutating func encode(_ value: UInt, forKey key: Key) throws { try put(value, key) }
  mutating func encode(_ value: UInt8, forKey key: Key) throws { try put(value, key) }
  mutating func encode(_ value: UInt16, forKey key: Key) throws { try put(value, key) }
  mutating func encode(_ value: UInt32, forKey key: Key) throws { try put(value, key) }
  mutating func encode(_ value: UInt64, forKey key: Key) throws { try put(value, key) }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    try encoder.encode(value, into: encoder.box.member(key.stringValue), key: key)
  }

  // Synthesized Codable calls these for optionals; nil becomes null unless
  // the encoder says to omit it (see JSONValueEncoder.nilEncoding).
  mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
    if let value { return try encode(value, forKey: key) }
    if encoder.options.nilEncoding == .null { try encodeNil(forKey: key) }
  }
  mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try optional(value, key) }
  mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try optional(value, key) }
  mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try optional(value, key) }
  mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try optional(value, key) }
  mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try optional(value, key) }
  mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try optional(value, key) }
  mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try optional(value, key) }
  mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try optional(value, key) }
  mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try optional(value, key) }
  mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try optional(value, key) }
  mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try optional(value, key) }
  mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try optional(value, key) }
  mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try optional(value, key) }
  mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try optional(value, key) }

  private mutating func put(_ value: Any, _ key: Key) throws {
    encoder.box.member(key.stringValue).content = .value(try encoder.scalar(value))
  }

  private mutating func optional(_ value: Any?, _ key: Key) throws {
    if let value { return try put(value, key) }
    if encoder.options.nilEncoding == .null { try encodeNil(forKey: key) }
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
    -> KeyedEncodingContainer<NestedKey>
  {
    let box = encoder.box.member(key.stringValue)
    return EncoderImpl(options: encoder.options, codingPath: codingPath + [key], box: box)
      .container(keyedBy: keyType)
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    let box = encoder.box.member(key.stringValue)
    return EncoderImpl(options: encoder.options, codingPath: codingPath + [key], box: box).unkeyedContainer()
  }

  mutating func superEncoder() -> any Encoder {
    EncoderImpl(
      options: encoder.options, codingPath: codingPath + [AnyKey("super")], box: encoder.box.member("super"))
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    EncoderImpl(
      options: encoder.options, codingPath: codingPath + [key], box: encoder.box.member(key.stringValue))
  }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
  let encoder: EncoderImpl
  var codingPath: [any CodingKey] { encoder.codingPath }
  var count: Int { encoder.box.arrayCount }

  mutating func encodeNil() throws { encoder.box.append().content = .value(.null) }
  mutating func encode(_ value: Bool) throws { try put(value) }
  mutating func encode(_ value: String) throws { try put(value) }
  mutating func encode(_ value: Double) throws { try put(value) }
  mutating func encode(_ value: Float) throws { try put(value) }
  mutating func encode(_ value: Int) throws { try put(value) }
  mutating func encode(_ value: Int8) throws { try put(value) }
  mutating func encode(_ value: Int16) throws { try put(value) }
  mutating func encode(_ value: Int32) throws { try put(value) }
  mutating func encode(_ value: Int64) throws { try put(value) }
  mutating func encode(_ value: UInt) throws { try put(value) }
  mutating func encode(_ value: UInt8) throws { try put(value) }
  mutating func encode(_ value: UInt16) throws { try put(value) }
  mutating func encode(_ value: UInt32) throws { try put(value) }
  mutating func encode(_ value: UInt64) throws { try put(value) }

  mutating func encode<T: Encodable>(_ value: T) throws {
    let key = AnyKey(index: count)
    try encoder.encode(value, into: encoder.box.append(), key: key)
  }

  private mutating func put(_ value: Any) throws {
    encoder.box.append().content = .value(try encoder.scalar(value))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
    -> KeyedEncodingContainer<NestedKey>
  {
    let key = AnyKey(index: count)
    return EncoderImpl(options: encoder.options, codingPath: codingPath + [key], box: encoder.box.append())
      .container(keyedBy: keyType)
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let key = AnyKey(index: count)
    return EncoderImpl(options: encoder.options, codingPath: codingPath + [key], box: encoder.box.append())
      .unkeyedContainer()
  }

  mutating func superEncoder() -> any Encoder {
    let key = AnyKey(index: count)
    return EncoderImpl(options: encoder.options, codingPath: codingPath + [key], box: encoder.box.append())
  }
}

private struct SingleContainer: SingleValueEncodingContainer {
  let encoder: EncoderImpl
  var codingPath: [any CodingKey] { encoder.codingPath }

  mutating func encodeNil() throws { encoder.box.content = .value(.null) }
  mutating func encode(_ value: Bool) throws { try put(value) }
  mutating func encode(_ value: String) throws { try put(value) }
  mutating func encode(_ value: Double) throws { try put(value) }
  mutating func encode(_ value: Float) throws { try put(value) }
  mutating func encode(_ value: Int) throws { try put(value) }
  mutating func encode(_ value: Int8) throws { try put(value) }
  mutating func encode(_ value: Int16) throws { try put(value) }
  mutating func encode(_ value: Int32) throws { try put(value) }
  mutating func encode(_ value: Int64) throws { try put(value) }
  mutating func encode(_ value: UInt) throws { try put(value) }
  mutating func encode(_ value: UInt8) throws { try put(value) }
  mutating func encode(_ value: UInt16) throws { try put(value) }
  mutating func encode(_ value: UInt32) throws { try put(value) }
  mutating func encode(_ value: UInt64) throws { try put(value) }

  mutating func encode<T: Encodable>(_ value: T) throws {
    try encoder.encode(value, into: encoder.box, key: nil)
  }

  private mutating func put(_ value: Any) throws {
    encoder.box.content = .value(try encoder.scalar(value))
  }
}

/// A coding key for array positions and `super`.
struct AnyKey: CodingKey {
  var stringValue: String
  var intValue: Int?
  init(_ string: String) {
    stringValue = string
    intValue = nil
  }
  init(index: Int) {
    stringValue = String(index)
    intValue = index
  }
  init?(stringValue: String) { self.init(stringValue) }
  init?(intValue: Int) { self.init(index: intValue) }
}
