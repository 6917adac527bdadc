import FolioJSON

extension JSONSchema {
  /// Every way `value` breaks the schema, in document order; empty when it
  /// is valid.
  ///
  /// ```swift
  /// if let first = schema.validate(.object(document)).first { throw first.error(file: path, bytes: bytes) }
  /// ```
  public func validate(_ value: JSONValue) -> [SchemaViolation] {
    var run = Run(schema: self)
    run.check(0, value)
    return run.violations
  }

  /// Whether `value` is valid: ``validate(_:)`` is empty.
  public func accepts(_ value: JSONValue) -> Bool {
    var run = Run(schema: self, stopAtFirst: true)
    run.check(0, value)
    return run.violations.isEmpty
  }

  /// What each `anyOf` or `oneOf` choice found at each place in the value,
  /// shared by every trial of one validation: a schema whose choices refer
  /// to the same subschemas (40 levels of `anyOf: [{$ref}, {$ref}]`) would
  /// otherwise check them 2^40 times. With it, each (choice, place) is
  /// checked once, so the cost is linear in the schema's size times the
  /// value's.
  private final class Memo {
    var found: [MemoKey: [SchemaViolation]] = [:]
  }

  private struct MemoKey: Hashable {
    var node: Int
    /// The place in the value: its tokens, each prefixed with its length
    /// so that no two lists of tokens share a spelling.
    var place: String
  }

  /// One validation: where it is in the value, and what it found.
  ///
  /// It recurses once per level of the value (and once per `$ref`,
  /// `anyOf` or `oneOf` step, which the compiler proved never loops), so
  /// its depth is bounded by the parser's nesting limit plus the schema's
  /// size.
  private struct Run {
    let schema: JSONSchema
    var stopAtFirst = false
    private var memo = Memo()
    var violations: [SchemaViolation] = []
    /// The tokens down to the current value, and which are array indexes.
    var tokens: [String] = []
    var indexes: [Bool] = []

    init(schema: JSONSchema, stopAtFirst: Bool = false) {
      self.schema = schema
      self.stopAtFirst = stopAtFirst
    }

    var done: Bool { stopAtFirst && !violations.isEmpty }

    /// `meta.tags[2]`, or `document` at the top.
    func path(adding extra: String? = nil) -> String {
      var text = ""
      for (token, isIndex) in zip(tokens, indexes) {
        text += isIndex ? "[" + token + "]" : (text.isEmpty ? "" : ".") + token
      }
      if let extra { text += (text.isEmpty ? "" : ".") + extra }
      return text.isEmpty ? "document" : text
    }

    mutating func fail(
      _ node: Int, _ message: String, member: String? = nil, atKey: Bool = false
    ) {
      var position = JSONPointer(tokens)
      if atKey, let member { position = position.appending(member) }
      violations.append(
        SchemaViolation(
          path: path(adding: member), message: message,
          schemaLocation: schema.fileName + schema.nodes[node].pointer.fragment, position: position,
          atKey: atKey))
    }

    mutating func check(_ index: Int, _ value: JSONValue) {
      let node = schema.nodes[index]
      if let always = node.always {
        if !always { fail(index, "no value is allowed here") }
        return
      }
      if let types = node.types, !types.contains(Types.of(value)) {
        // The other keywords would only repeat this in other words.
        fail(index, "expected \(types.spelled), got \(Types.name(of: value))")
        return
      }
      if let constValue = node.constValue, !Self.equal(constValue, value) {
        fail(index, "expected \(constValue.compactString), got \(value.compactString)")
      }
      if let values = node.enumValues, !values.contains(where: { Self.equal($0, value) }) {
        let listed = values.prefix(8).map(\.compactString).joined(separator: ", ")
        fail(index, "expected one of \(listed)\(values.count > 8 ? ", …" : ""), got \(value.compactString)")
      }
      switch value {
      case .number(let text):
        if let number = ExactNumber(text) {
          if let minimum = node.minimum, number.compare(minimum) < 0 {
            fail(index, "expected at least \(node.minimumText!), got \(text)")
          }
          if let maximum = node.maximum, number.compare(maximum) > 0 {
            fail(index, "expected at most \(node.maximumText!), got \(text)")
          }
        }
      case .string(let text):
        if node.minLength != nil || node.maxLength != nil {
          let length = text.unicodeScalars.count
          if let minimum = node.minLength, length < minimum {
            fail(index, "expected at least \(minimum) character\(minimum == 1 ? "" : "s"), got \(length)")
          }
          if let maximum = node.maxLength, length > maximum {
            fail(index, "expected at most \(maximum) character\(maximum == 1 ? "" : "s"), got \(length)")
          }
        }
        if let pattern = node.pattern, !pattern.matches(text) {
          fail(index, "expected a string matching \(pattern.source), got \(value.compactString)")
        }
        if node.dateTime && !DateTimeFormat.isValid(text) {
          fail(index, "expected a date-time such as 2026-12-01T09:30:00Z, got \(value.compactString)")
        }
      case .object(let object):
        // The members' own faults first, in document order; then what is
        // missing.
        for (name, member) in object {
          if let child = node.properties[name] {
            descend(name, isIndex: false) { $0.check(child, member) }
          } else if let other = node.additionalProperties {
            if schema.nodes[other].always == false {
              fail(other, Self.notAllowed(name, known: node.properties.keys), member: name, atKey: true)
            } else {
              descend(name, isIndex: false) { $0.check(other, member) }
            }
          }
          if done { return }
        }
        for name in node.required where object[name] == nil {
          fail(index, "required, but missing", member: name)
          if done { return }
        }
      case .array(let members):
        if let items = node.items {
          for (position, member) in members.enumerated() {
            descend(String(position), isIndex: true) { $0.check(items, member) }
            if done { return }
          }
        }
      default:
        break
      }
      if let target = node.ref { check(target, value) }
      if let choices = node.anyOf { checkChoices(index, choices, value, exactlyOne: false) }
      if let choices = node.oneOf { checkChoices(index, choices, value, exactlyOne: true) }
    }

    mutating func descend(_ token: String, isIndex: Bool, _ body: (inout Run) -> Void) {
      tokens.append(token)
      indexes.append(isIndex)
      body(&self)
      tokens.removeLast()
      indexes.removeLast()
    }

    /// `anyOf` (at least one choice) or `oneOf` (exactly one). When none
    /// fits, the message quotes the choice that came closest (the fewest
    /// violations), which is usually the one the writer meant.
    mutating func checkChoices(_ index: Int, _ choices: [Int], _ value: JSONValue, exactlyOne: Bool) {
      var matched: [Int] = []
      var closest: [SchemaViolation]?
      let place = tokens.map { "\($0.utf8.count):\($0)" }.joined()
      for (position, choice) in choices.enumerated() {
        let key = MemoKey(node: choice, place: place)
        let found: [SchemaViolation]
        if let known = memo.found[key] {
          found = known
        } else {
          var trial = Run(schema: schema)
          trial.memo = memo
          trial.tokens = tokens
          trial.indexes = indexes
          trial.check(choice, value)
          found = trial.violations
          memo.found[key] = found
        }
        if found.isEmpty {
          matched.append(position)
          if !exactlyOne { return }
        } else if closest == nil || found.count < closest!.count {
          closest = found
        }
      }
      let keyword = exactlyOne ? "oneOf" : "anyOf"
      if matched.isEmpty {
        let hint =
          closest?.first.map { "; closest: \($0.path == path() ? "" : $0.path + ": ")\($0.message)" } ?? ""
        fail(index, "matches none of the \(choices.count) choices of \(keyword)\(hint)")
      } else if exactlyOne && matched.count > 1 {
        fail(
          index,
          "matches \(matched.count) choices of oneOf (\(matched.map { "#\($0)" }.joined(separator: ", "))); expected exactly one"
        )
      }
    }

    /// `titel: not allowed`, with the property it likely meant.
    static func notAllowed(_ name: String, known: Dictionary<String, Int>.Keys) -> String {
      var best: (name: String, distance: Int)?
      for candidate in known {
        let distance = editDistance(name, candidate)
        if distance <= max(1, candidate.count / 3),
          best.map({ distance < $0.distance || (distance == $0.distance && candidate < $0.name) }) ?? true
        {
          best = (candidate, distance)
        }
      }
      return "no such property" + (best.map { "; did you mean '\($0.name)'?" } ?? "")
    }

    /// Edit distance by characters, a swap of neighbours counting as one
    /// edit (`titel` is one from `title`), for typo hints only.
    static func editDistance(_ a: String, _ b: String) -> Int {
      let x = Array(a)
      let y = Array(b)
      if x.isEmpty || y.isEmpty { return max(x.count, y.count) }
      var rows = [[Int]](repeating: [Int](repeating: 0, count: y.count + 1), count: x.count + 1)
      for i in 0...x.count { rows[i][0] = i }
      for j in 0...y.count { rows[0][j] = j }
      for i in 1...x.count {
        for j in 1...y.count {
          let cost = x[i - 1] == y[j - 1] ? 0 : 1
          rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
          if i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1] {
            rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
          }
        }
      }
      return rows[x.count][y.count]
    }

    /// JSON Schema's equality for `enum` and `const`: numbers by value (`1`
    /// equals `1.0`), objects whatever their member order, strings by
    /// their exact scalars; `true` is not `1`.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
      switch (a, b) {
      case (.number(let x), .number(let y)):
        guard let p = ExactNumber(x), let q = ExactNumber(y) else { return x == y }
        return p.compare(q) == 0
      case (.array(let x), .array(let y)):
        return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
      case (.object(let x), .object(let y)):
        guard x.count == y.count else { return false }
        for (key, value) in x {
          guard let other = y[key], equal(value, other) else { return false }
        }
        return true
      default:
        return a == b
      }
    }
  }
}
