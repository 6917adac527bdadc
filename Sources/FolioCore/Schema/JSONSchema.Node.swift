import FolioJSON

extension JSONSchema {
  /// The JSON types a `type` keyword names. `integer` is part of `number`:
  /// a schema that allows numbers allows integers.
  public struct Types: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: UInt8
    /// Creates a set from its bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `null`.
    public static let null = Types(rawValue: 1)
    /// `true` and `false`.
    public static let boolean = Types(rawValue: 2)
    /// Objects.
    public static let object = Types(rawValue: 4)
    /// Arrays.
    public static let array = Types(rawValue: 8)
    /// Numbers whose fraction is zero (`1` and `1.0`).
    public static let integer = Types(rawValue: 16)
    /// Numbers with a fraction (`1.5`): the part of `number` that is not
    /// `integer`, which no `type` names alone.
    static let fraction = Types(rawValue: 32)
    /// Every number: `integer` and the numbers with a fraction.
    public static let number = Types(rawValue: 48)
    /// Strings.
    public static let string = Types(rawValue: 64)
    /// Every type.
    public static let all: Types = [.null, .boolean, .object, .array, .number, .string]

    /// The names as `type` spells them, in this order.
    static let names: [(String, Types)] = [
      ("null", .null), ("boolean", .boolean), ("object", .object), ("array", .array), ("number", .number),
      ("integer", .integer), ("string", .string),
    ]

    /// The type of `value` (a number is `integer` when its fraction is zero).
    static func of(_ value: JSONValue) -> Types {
      switch value {
      case .null: .null
      case .bool: .boolean
      case .object: .object
      case .array: .array
      case .string: .string
      case .number(let text): ExactNumber(text)?.isInteger == false ? .fraction : .integer
      }
    }

    /// `integer`, `string or null`: for messages.
    var spelled: String {
      var names: [String] = []
      for (name, type) in Types.names where contains(type) {
        if type == .integer && contains(.number) { continue }
        names.append(name)
      }
      if names.count <= 1 { return names.first ?? "nothing" }
      return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }

    /// The name of a value's type: `integer` or `number`, `string`, ….
    static func name(of value: JSONValue) -> String {
      let type = of(value)
      return type == .fraction ? "number" : type.spelled
    }
  }

  /// One compiled subschema: the keywords of one schema object, with its
  /// subschemas as indexes into ``JSONSchema/nodes``.
  struct Node: Sendable {
    /// Where it is in the file.
    var pointer: JSONPointer
    /// A `true` or `false` schema: everything, or nothing.
    var always: Bool?
    var types: Types?
    var properties: [String: Int] = [:]
    var required: [String] = []
    var additionalProperties: Int?
    var items: Int?
    var enumValues: [JSONValue]?
    /// Nil when there is no `const` (a `const` of null is `.null`).
    var constValue: JSONValue?
    var minimum: ExactNumber?
    var maximum: ExactNumber?
    var minimumText: String?
    var maximumText: String?
    var minLength: Int?
    var maxLength: Int?
    var pattern: SchemaPattern?
    var dateTime = false
    var ref: Int?
    var anyOf: [Int]?
    var oneOf: [Int]?

    init(pointer: JSONPointer) { self.pointer = pointer }
  }
}

extension ExactNumber {
  /// Whether the fraction is zero: JSON Schema's `integer`, which counts
  /// `1.0` and `1e2` as integers.
  var isInteger: Bool { sign == 0 || digits.count <= exponent }
}
