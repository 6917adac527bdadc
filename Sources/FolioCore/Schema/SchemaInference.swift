import FolioJSON

/// Proposes a schema from documents, for `folio schema TABLE --infer`: what
/// the documents have in common, as a starting point to edit.
///
/// - Each property gets the types its values have (`integer` when every
///   number is whole; `number` otherwise).
/// - Properties every document holds are `required`.
/// - A string property with few distinct values (at most
///   ``maximumEnumValues``, and fewer than its values, so that some repeat)
///   gets an `enum`; one whose values are all RFC 3339 date-times gets
///   `format: date-time`.
/// - Objects nest the same rules; array members share one `items` schema.
/// - The top level refuses other properties (`additionalProperties:
///   false`), which catches misspelt keys; nested objects stay open.
/// - Counter columns allow an integer or its decimal-string form (a
///   counter past 32 bits is stored as a string); set columns are arrays.
///
/// ```swift
/// var inference = SchemaInference()
/// for document in documents { inference.add(document) }
/// let schema = inference.schema(title: "todos", counters: ["views"], sets: ["tags"])
/// ```
public struct SchemaInference: Sendable {
  /// The most distinct strings that make an `enum`.
  public static let maximumEnumValues = 10
  /// Below this depth values are not looked into (any value passes).
  static let maximumDepth = 16

  /// What the values at one place have in common.
  final class Shape: @unchecked Sendable {
    // @unchecked: a Shape is built by one `add` at a time (SchemaInference
    // is a value; its shapes are never shared between threads while built).
    var count = 0
    var types: JSONSchema.Types = []
    var strings: Set<String>? = []
    var allDateTimes = true
    var properties: [String: Shape] = [:]
    var objects = 0
    var items: Shape?
  }

  private var root = Shape()

  /// An empty inference.
  public init() {}

  /// Takes one document into account.
  public mutating func add(_ document: JSONObject) {
    if !isKnownUniquelyReferenced(&root) { root = root.copy() }
    root.add(.object(document), depth: 0)
  }

  /// The proposed schema.
  /// - Parameters:
  ///   - title: the schema's `title` (the table's name).
  ///   - counters: counter columns.
  ///   - sets: set columns.
  public func schema(title: String, counters: Set<String> = [], sets: Set<String> = []) -> JSONValue {
    var object = root.schema(depth: 0)
    object["$schema"] = .string(JSONSchema.draft)
    object["title"] = .string(title)
    object["type"] = "object"
    object["additionalProperties"] = false
    var properties = object["properties"]?.objectValue ?? [:]
    for name in counters {
      properties[name] = [
        "type": ["integer", "string"], "pattern": "^-?[0-9]+$",
        "description": "a counter: a decimal string once past 32 bits",
      ]
    }
    for name in sets {
      var set = properties[name]?.objectValue ?? [:]
      set["type"] = "array"
      properties[name] = .object(set)
    }
    if !properties.isEmpty { object["properties"] = .object(properties) }
    return .object(object)
  }
}

extension SchemaInference.Shape {
  func copy() -> SchemaInference.Shape {
    let other = SchemaInference.Shape()
    other.count = count
    other.types = types
    other.strings = strings
    other.allDateTimes = allDateTimes
    other.properties = properties.mapValues { $0.copy() }
    other.objects = objects
    other.items = items?.copy()
    return other
  }

  func add(_ value: JSONValue, depth: Int) {
    count += 1
    let type = JSONSchema.Types.of(value)
    types.formUnion(type)
    if case .string(let text) = value {
      if strings != nil {
        strings!.insert(text)
        if strings!.count > SchemaInference.maximumEnumValues { strings = nil }
      }
      if allDateTimes && !DateTimeFormat.isValid(text) { allDateTimes = false }
    }
    guard depth < SchemaInference.maximumDepth else { return }
    switch value {
    case .object(let object):
      objects += 1
      for (key, member) in object {
        let shape = properties[key] ?? SchemaInference.Shape()
        properties[key] = shape
        shape.add(member, depth: depth + 1)
      }
    case .array(let members):
      if items == nil { items = SchemaInference.Shape() }
      for member in members { items!.add(member, depth: depth + 1) }
    default:
      break
    }
  }

  func schema(depth: Int) -> JSONObject {
    var object = JSONObject()
    if count == 0 { return object }
    var names: [JSONValue] = []
    for (name, type) in JSONSchema.Types.names where types.isSuperset(of: type) {
      // `number` already covers `integer`.
      if type == .integer && types.contains(.number) { continue }
      names.append(.string(name))
    }
    if types.contains(.fraction) && !types.contains(.number) {
      names.append("number")  // fractions only
    }
    if !names.isEmpty { object["type"] = names.count == 1 ? names[0] : .array(names) }
    if types == .string, let strings, strings.count < count {
      object["enum"] = .array(strings.sorted().map(JSONValue.string))
    } else if types == .string, allDateTimes {
      object["format"] = "date-time"
    }
    if depth < SchemaInference.maximumDepth {
      if objects > 0 && !properties.isEmpty {
        var members = JSONObject()
        var required: [String] = []
        for (name, shape) in properties {
          members[name] = .object(shape.schema(depth: depth + 1))
          if shape.count == objects { required.append(name) }
        }
        object["properties"] = .object(members)
        if !required.isEmpty { object["required"] = .array(required.sorted().map(JSONValue.string)) }
      }
      if let items, items.count > 0 { object["items"] = .object(items.schema(depth: depth + 1)) }
    }
    return object
  }
}
