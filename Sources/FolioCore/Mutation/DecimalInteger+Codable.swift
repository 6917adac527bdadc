import FolioJSON

/// A `DecimalInteger` field holds a counter of any size, stored as the
/// the transform rules store one: a JSON number inside the 32-bit signed range, a
/// decimal string outside it. It reads either form.
///
/// ```swift
/// struct Stats: Codable { var id: String; var views: DecimalInteger }
/// ```
extension DecimalInteger: Codable, JSONRepresentable {
  /// Reads a JSON integer number or a decimal-integer string.
  public init(from decoder: any Decoder) throws {
    let single = try decoder.singleValueContainer()
    let value = try single.decode(JSONValue.self)
    let text: String? =
      switch value {
      case .number(let text), .string(let text): text
      default: nil
      }
    guard let text, let integer = DecimalInteger(text) else {
      throw DecodingError.typeMismatch(
        DecimalInteger.self,
        .init(
          codingPath: decoder.codingPath,
          debugDescription: "expected an integer or a decimal string, found \(value.kindName)"))
    }
    self = integer
  }

  /// Writes the counter form of the transform rules.
  public func encode(to encoder: any Encoder) throws {
    var single = encoder.singleValueContainer()
    try single.encode(jsonValue)
  }

  /// Seed `002_*`'s stored form: a number inside the 32-bit signed range, a
  /// decimal string outside it.
  public var jsonValue: JSONValue {
    // seed 002: "the stored result switches to a string past the 32-bit range"
    int32Value != nil ? .number(description) : .string(description)
  }

  /// The value from any integer type, exactly.
  public init(exactly value: some BinaryInteger) {
    self = DecimalInteger(String(value))!
  }
}
