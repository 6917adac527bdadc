import FolioJSON
import FolioSystem

/// Turns a schema file's parsed value into ``JSONSchema`` nodes, refusing
/// every keyword outside the subset with its `file:line:col`.
///
/// Subschemas wait on a work list rather than being compiled by recursion,
/// so a deeply nested file cannot exhaust the stack. A `$ref` is resolved
/// once every subschema has its node; one that points at a place no keyword
/// compiled (`#/properties`, say, is not a schema, but `#/$defs/a` or
/// `#/properties/b` are) is compiled there on demand.
struct SchemaCompiler {
  let file: String
  let source: [UInt8]
  let root: JSONValue

  private var nodes: [JSONSchema.Node] = []
  private var byPointer: [JSONPointer: Int] = [:]
  private var work: [(index: Int, value: JSONValue)] = []
  /// Each `$ref`: the node it sits in, the place it names, and where it is.
  private var refs: [(node: Int, target: JSONPointer, at: JSONPointer)] = []

  /// The keywords that only annotate: taken, and never checked.
  static let annotations: Set<String> = [
    "$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly",
  ]
  /// Every keyword the subset checks, for messages.
  static let checked = [
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "minimum", "maximum",
    "minLength", "maxLength", "pattern", "format", "$ref", "$defs", "anyOf", "oneOf",
  ]

  init(file: String, source: [UInt8], root: JSONValue) {
    self.file = file
    self.source = source
    self.root = root
  }

  mutating func compile() throws -> [JSONSchema.Node] {
    _ = enqueue(root, at: JSONPointer())
    var resolved = 0
    while true {
      while let next = work.popLast() { try compileNode(next.index, next.value) }
      guard resolved < refs.count else { break }
      while resolved < refs.count {
        let ref = refs[resolved]
        resolved += 1
        if let target = byPointer[ref.target] {
          nodes[ref.node].ref = target
          continue
        }
        guard let value = ref.target.resolve(in: root), Self.isSchema(value) else {
          throw error(
            "$ref '\(ref.target.fragment)' names no schema in this file", at: ref.at.appending("$ref"))
        }
        nodes[ref.node].ref = enqueue(value, at: ref.target)
      }
    }
    try checkCycles()
    return nodes
  }

  private static func isSchema(_ value: JSONValue) -> Bool {
    switch value {
    case .object, .bool: true
    default: false
    }
  }

  /// Gives `value` (a schema at `pointer`) a node, compiled later; a place
  /// already compiled keeps its node.
  private mutating func enqueue(_ value: JSONValue, at pointer: JSONPointer) -> Int {
    if let existing = byPointer[pointer] { return existing }
    nodes.append(JSONSchema.Node(pointer: pointer))
    let index = nodes.count - 1
    byPointer[pointer] = index
    work.append((index, value))
    return index
  }

  /// A subschema under `keyword`, checked to be a schema.
  private mutating func subschema(_ value: JSONValue, at pointer: JSONPointer) throws -> Int {
    guard Self.isSchema(value) else {
      throw error(
        "expected a schema (an object, true or false), got \(JSONSchema.Types.name(of: value))", at: pointer)
    }
    return enqueue(value, at: pointer)
  }

  private mutating func compileNode(_ index: Int, _ value: JSONValue) throws {
    let here = nodes[index].pointer
    var node = nodes[index]
    defer { nodes[index] = node }
    switch value {
    case .bool(let flag):
      node.always = flag
      return
    case .object:
      break
    default:
      throw error(
        "expected a schema (an object, true or false), got \(JSONSchema.Types.name(of: value))", at: here)
    }
    guard case .object(let object) = value else { return }
    for (keyword, argument) in object {
      let at = here.appending(keyword)
      if Self.annotations.contains(keyword) { continue }
      if try compileFileKeyword(keyword, argument, at: at, here: here) { continue }
      if try compileShapeKeyword(keyword, argument, at: at, into: &node) { continue }
      if try compileValueKeyword(keyword, argument, at: at, into: &node) { continue }
      if try compileReferenceKeyword(keyword, argument, at: at, node: index, here: here, into: &node) {
        continue
      }
      throw error(
        "unsupported keyword '\(keyword)'; Folio checks \(Self.checked.joined(separator: ", ")) (see docs/schemas.md)",
        at: at, key: true)
    }
  }

  /// `$schema` and `$id`, which only the top of the file may hold.
  /// - Returns: whether `keyword` is one of them.
  private func compileFileKeyword(
    _ keyword: String, _ argument: JSONValue, at: JSONPointer, here: JSONPointer
  )
    throws -> Bool
  {
    switch keyword {
    case "$schema":
      guard here.tokens.isEmpty else {
        throw error("'$schema' belongs at the top of the file only", at: at, key: true)
      }
      let text = argument.stringValue ?? ""
      guard text == JSONSchema.draft || text == JSONSchema.draft + "#" else {
        throw error("'$schema' must be \(JSONSchema.draft): Folio reads that draft only", at: at)
      }
    case "$id":
      // Another base URI inside the file would change what a $ref names.
      guard here.tokens.isEmpty else {
        throw error(
          "'$id' inside a schema is not supported; only the top may name the file", at: at, key: true)
      }
      guard argument.stringValue != nil else { throw error("'$id' must be a string", at: at) }
    default:
      return false
    }
    return true
  }

  /// The keywords of a value's shape: `type`, `properties`, `$defs`,
  /// `required`, `additionalProperties` and `items`.
  /// - Returns: whether `keyword` is one of them.
  private mutating func compileShapeKeyword(
    _ keyword: String, _ argument: JSONValue, at: JSONPointer, into node: inout JSONSchema.Node
  ) throws -> Bool {
    switch keyword {
    case "type":
      node.types = try types(argument, at: at)
    case "properties", "$defs":
      guard case .object(let members) = argument else {
        throw error("'\(keyword)' must be an object of schemas", at: at)
      }
      for (name, schema) in members {
        let child = try subschema(schema, at: at.appending(name))
        if keyword == "properties" { node.properties[name] = child }
      }
    case "required":
      guard case .array(let names) = argument, names.allSatisfy({ $0.stringValue != nil }) else {
        throw error("'required' must be an array of property names", at: at)
      }
      let list = names.compactMap(\.stringValue)
      guard Set(list).count == list.count else { throw error("'required' names a property twice", at: at) }
      node.required = list
    case "additionalProperties":
      node.additionalProperties = try subschema(argument, at: at)
    case "items":
      if case .array = argument {
        throw error(
          "'items' must be one schema for every member; the tuple form ('prefixItems') is not supported",
          at: at)
      }
      node.items = try subschema(argument, at: at)
    default:
      return false
    }
    return true
  }

  /// The keywords that bound a value: `enum`, `const`, `minimum`,
  /// `maximum`, `minLength`, `maxLength`, `pattern` and `format`.
  /// - Returns: whether `keyword` is one of them.
  private func compileValueKeyword(
    _ keyword: String, _ argument: JSONValue, at: JSONPointer, into node: inout JSONSchema.Node
  ) throws -> Bool {
    switch keyword {
    case "enum":
      guard case .array(let values) = argument else { throw error("'enum' must be an array", at: at) }
      node.enumValues = values
    case "const":
      node.constValue = argument
    case "minimum", "maximum":
      guard case .number(let text) = argument, let number = ExactNumber(text) else {
        throw error("'\(keyword)' must be a number", at: at)
      }
      if keyword == "minimum" {
        (node.minimum, node.minimumText) = (number, text)
      } else {
        (node.maximum, node.maximumText) = (number, text)
      }
    case "minLength", "maxLength":
      guard case .number(let text) = argument, let number = ExactNumber(text), number.isInteger,
        number.sign >= 0
      else {
        throw error("'\(keyword)' must be a non-negative integer", at: at)
      }
      let count = number.digits.count > 18 || number.exponent > 18 ? Int.max : Int(wholeValue(number))
      if keyword == "minLength" { node.minLength = count } else { node.maxLength = count }
    case "pattern":
      guard let text = argument.stringValue else { throw error("'pattern' must be a string", at: at) }
      do {
        node.pattern = try SchemaPattern(text)
      } catch {
        throw self.error("'pattern' is not a regular expression Folio can read: \(error)", at: at)
      }
    case "format":
      guard let text = argument.stringValue else { throw error("'format' must be a string", at: at) }
      guard text == "date-time" else {
        throw error("format '\(text)' is not supported; Folio checks format date-time only", at: at)
      }
      node.dateTime = true
    default:
      return false
    }
    return true
  }

  /// `$ref`, resolved once every node is compiled, and `anyOf`/`oneOf`.
  /// - Returns: whether `keyword` is one of them.
  private mutating func compileReferenceKeyword(
    _ keyword: String, _ argument: JSONValue, at: JSONPointer, node index: Int, here: JSONPointer,
    into node: inout JSONSchema.Node
  ) throws -> Bool {
    switch keyword {
    case "$ref":
      guard let text = argument.stringValue else { throw error("'$ref' must be a string", at: at) }
      guard let target = JSONPointer(fragment: text) else {
        throw error(
          "$ref '\(text)' is not supported: Folio follows a $ref to a place in this file ('#/$defs/name'), not to another file or an anchor",
          at: at)
      }
      refs.append((index, target, here))
    case "anyOf", "oneOf":
      guard case .array(let choices) = argument, !choices.isEmpty else {
        throw error("'\(keyword)' must be a non-empty array of schemas", at: at)
      }
      var list: [Int] = []
      for (position, choice) in choices.enumerated() {
        list.append(try subschema(choice, at: at.appending(index: position)))
      }
      if keyword == "anyOf" { node.anyOf = list } else { node.oneOf = list }
    default:
      return false
    }
    return true
  }

  private func wholeValue(_ number: ExactNumber) -> Int64 {
    var value: Int64 = 0
    for position in 0..<number.exponent {
      value = value * 10 + Int64(position < number.digits.count ? number.digits[position] : 0)
    }
    return value
  }

  private func types(_ argument: JSONValue, at: JSONPointer) throws -> JSONSchema.Types {
    let names: [JSONValue]
    switch argument {
    case .string: names = [argument]
    case .array(let list) where !list.isEmpty: names = list
    default: throw error("'type' must be a type name or a non-empty array of them", at: at)
    }
    var types: JSONSchema.Types = []
    var seen = Set<String>()
    for name in names {
      guard let text = name.stringValue, let type = JSONSchema.Types.names.first(where: { $0.0 == text })?.1
      else {
        throw error(
          "unknown type \(name.compactString); expected null, boolean, object, array, number, integer or string",
          at: at)
      }
      guard seen.insert(text).inserted else { throw error("'type' names \(text) twice", at: at) }
      types.formUnion(type)
    }
    return types
  }

  /// A `$ref` chain, or an `anyOf`/`oneOf` choice, that comes back to where
  /// it started checks the same value forever: refused here.
  private func checkCycles() throws {
    // 0: not seen, 1: on the current path, 2: done.
    var state = [UInt8](repeating: 0, count: nodes.count)
    for start in nodes.indices where state[start] == 0 {
      var stack: [(node: Int, next: Int)] = [(start, 0)]
      state[start] = 1
      while let top = stack.last {
        let edges = sameValueEdges(top.node)
        if top.next == edges.count {
          state[top.node] = 2
          stack.removeLast()
          continue
        }
        stack[stack.count - 1].next += 1
        let target = edges[top.next]
        if state[target] == 1 {
          let at = nodes[top.node]
          throw error(
            "this $ref (or anyOf/oneOf) leads back to '\(nodes[target].pointer.fragment)' without reaching a value: it would never end",
            at: at.ref != nil ? at.pointer.appending("$ref") : at.pointer)
        }
        if state[target] == 0 {
          state[target] = 1
          stack.append((target, 0))
        }
      }
    }
  }

  /// The subschemas that apply to the same value as `node`.
  private func sameValueEdges(_ node: Int) -> [Int] {
    let n = nodes[node]
    return (n.ref.map { [$0] } ?? []) + (n.anyOf ?? []) + (n.oneOf ?? [])
  }

  /// An error at the value (or, with `key`, the member name) `pointer`
  /// names in the file.
  private func error(_ message: String, at pointer: JSONPointer, key: Bool = false) -> FolioError {
    let (line, column) = pointer.lineAndColumn(in: source, atKey: key)
    return FolioError(.invalidConfig, message, location: .init(file: file, line: line, column: column))
      .withExcerpt(from: source)
  }
}
