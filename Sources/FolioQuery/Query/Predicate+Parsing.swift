import FolioCore
import FolioJSON
import FolioSystem

extension Predicate {
  /// Parses a predicate from its text form (see ``Predicate``).
  ///
  /// ```swift
  /// let p = try Predicate(parsing: #"(a > 1 || !exists(b)) && tags contains "x""#)
  /// ```
  /// - Parameter source: the name errors give the text, such as `--where`.
  /// - Throws: `INVALID_QUERY` with the 1-based line and column of the
  ///   mistake, such as `<where>:1:7: error: expected a value after '=='`.
  public init(parsing text: String, source: String = "<where>") throws {
    var parser = PredicateParser(text: text, source: source)
    self = try parser.parseWhole()
  }
}

/// A recursive-descent parser over the text's Unicode scalars, so that
/// columns count scalars as the rest of Folio's positions do.
struct PredicateParser {
  /// How deep `(`, `!`, arrays and objects may nest, as the JSON parser's
  /// limit: the parser and ``Predicate/matches(_:)`` recurse, and a
  /// `--where` of 20k `(` must be an error, not a stack overflow.
  static let maximumDepth = 512

  private let scalars: [Unicode.Scalar]
  private let source: String
  private var i = 0
  private var depth = 0

  init(text: String, source: String) {
    scalars = Array(text.unicodeScalars)
    self.source = source
  }

  mutating func parseWhole() throws -> Predicate {
    skipSpace()
    if i == scalars.count { throw error("empty expression; write a condition such as 'a == 1'") }
    let predicate = try parseOr()
    skipSpace()
    if i < scalars.count {
      throw error("unexpected '\(tokenText())'; expected '&&', '||' or the end of the expression")
    }
    return predicate
  }

  // MARK: Grammar

  private mutating func parseOr() throws -> Predicate {
    var terms = [try parseAnd()]
    while consume("||") { terms.append(try parseAnd()) }
    return Self.balanced(terms[...], Predicate.or)
  }

  private mutating func parseAnd() throws -> Predicate {
    var terms = [try parseUnary()]
    while consume("&&") { terms.append(try parseUnary()) }
    return Self.balanced(terms[...], Predicate.and)
  }

  /// Joins a chain of terms into a tree of depth log2(n) rather than n: both
  /// operators are associative and pure, and a left-deep tree of 100k
  /// terms would overflow the stack when evaluated or freed.
  private static func balanced(
    _ terms: ArraySlice<Predicate>, _ join: (Predicate, Predicate) -> Predicate
  ) -> Predicate {
    if terms.count == 1 { return terms.first! }
    let middle = terms.startIndex + terms.count / 2
    return join(balanced(terms[..<middle], join), balanced(terms[middle...], join))
  }

  /// Runs `body` one nesting level deeper, refusing past ``maximumDepth``.
  private mutating func nested<T>(_ body: (inout PredicateParser) throws -> T) throws -> T {
    guard depth < Self.maximumDepth else {
      throw error("the expression nests deeper than \(Self.maximumDepth) levels")
    }
    depth += 1
    defer { depth -= 1 }
    return try body(&self)
  }

  private mutating func parseUnary() throws -> Predicate {
    skipSpace()
    if peek("!") && !peek("!=") {
      i += 1
      return .not(try nested { try $0.parseUnary() })
    }
    if consume("(") {
      let inner = try nested { try $0.parseOr() }
      guard consume(")") else { throw error("expected ')' to close the '(' ", expectedHere: true) }
      return inner
    }
    if peekWord("exists") {
      let save = i
      i += 6
      if consume("(") {
        skipSpace()
        guard let path = try parsePath() else { throw error("expected a path inside exists(…)") }
        guard consume(")") else {
          throw error("expected ')' after the path in exists(…)", expectedHere: true)
        }
        return .exists(path)
      }
      i = save
    }
    let left = try parseOperand(after: nil, left: nil)
    skipSpace()
    guard let comparator = parseComparator() else {
      if peek("=") { throw error("'=' is not a comparison; write '==' to test equality") }
      if i < scalars.count && !peek("&&") && !peek("||") && !peek(")") {
        throw error(
          "unexpected '\(tokenText())'; expected a comparison (== != < <= > >= in contains), '&&' or '||'")
      }
      return .isTrue(left)
    }
    let right = try parseOperand(after: comparator.rawValue, left: left)
    return .compare(left, comparator, right)
  }

  private mutating func parseComparator() -> Predicate.Comparator? {
    for symbol in ["==", "!=", "<=", ">=", "<", ">"] where peek(symbol) {
      i += symbol.unicodeScalars.count
      return Predicate.Comparator(rawValue: symbol)
    }
    for word in ["in", "contains"] where peekWord(word) {
      i += word.count
      return Predicate.Comparator(rawValue: word)
    }
    return nil
  }

  /// - Parameter left: the comparison's left operand, when this is the
  ///   right one.
  private mutating func parseOperand(after comparator: String?, left: Predicate.Operand?) throws
    -> Predicate.Operand
  {
    skipSpace()
    guard i < scalars.count else {
      throw error(
        comparator.map { "expected a value after '\($0)'" }
          ?? "expected a condition at the end of the expression")
    }
    if peek("=") {
      throw error("'=' is not a comparison; write '==' to test equality")
    }
    if let literal = try parseLiteral() { return .literal(literal) }
    if scalars[i] == "'" { throw singleQuoted() }
    let start = i
    if let path = try parsePath() {
      // A bare word after a field and a comparator is almost always text
      // the writer meant to quote (`sex == male`); read as a field it
      // would compare against a field nobody has and match nothing, in
      // silence. A field on the right of a field is written in backticks;
      // after a literal (`5 < n`) a bare word is the field.
      if let comparator, case .path? = left, scalars[start] != "`" {
        let word = path.description
        i = start
        throw error(
          "'\(word)' after '\(comparator)' is a bare word: quote text as \"\(word)\", or write a field on the right in backticks, `\(word)`"
        )
      }
      return .path(path)
    }
    throw error(
      "unexpected '\(tokenText())'; expected "
        + (comparator.map { "a value after '\($0)'" } ?? "a path or a JSON literal"))
  }

  // MARK: Paths

  private static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
    c == "_" || c == "$" || (c >= "a" && c <= "z") || (c >= "A" && c <= "Z")
      || c.value > 0x7F
        && c.properties.isAlphabetic
  }

  private static func isIdentifierPart(_ c: Unicode.Scalar) -> Bool {
    isIdentifierStart(c) || (c >= "0" && c <= "9") || c == "-"
  }

  private mutating func parsePath() throws -> FieldPath? {
    var segments: [String] = []
    repeat {
      if i < scalars.count && scalars[i] == "`" {
        guard let (segment, end) = FieldPath.backtickedSegment(in: scalars, at: i) else {
          throw error("unterminated `quoted` path segment")
        }
        i = end
        segments.append(segment)
      } else if i < scalars.count && Self.isIdentifierStart(scalars[i]) {
        var segment = String.UnicodeScalarView()
        while i < scalars.count && Self.isIdentifierPart(scalars[i]) {
          segment.append(scalars[i])
          i += 1
        }
        segments.append(String(segment))
      } else if segments.isEmpty {
        return nil
      } else {
        throw error("expected a path segment after '.'")
      }
    } while consumeImmediate(".")
    return FieldPath(segments)
  }

  // MARK: Literals

  private mutating func parseLiteral() throws -> JSONValue? {
    guard i < scalars.count else { return nil }
    let c = scalars[i]
    if c == "\"" { return try parseString() }
    if c == "-" || (c >= "0" && c <= "9") { return try parseNumber() }
    if c == "[" { return try parseArray() }
    if c == "{" { return try parseObject() }
    for (word, value) in [("true", JSONValue.bool(true)), ("false", .bool(false)), ("null", .null)]
    where peekWord(word) {
      i += word.count
      return value
    }
    return nil
  }

  private mutating func parseString() throws -> JSONValue {
    let start = i
    i += 1
    while i < scalars.count && scalars[i] != "\"" {
      if scalars[i] == "\\" { i += 1 }
      i += 1
    }
    guard i < scalars.count else {
      i = start
      throw error("unterminated string; close it with '\"'")
    }
    i += 1
    var text = String.UnicodeScalarView()
    text.append(contentsOf: scalars[start..<i])
    do {
      return try JSONValue(parsing: String(text))
    } catch let error as FolioError {
      let offset = (error.location?.column ?? 1) - 1
      i = start + offset
      throw self.error("invalid string literal: \(error.message)")
    }
  }

  private mutating func parseNumber() throws -> JSONValue {
    let start = i
    while i < scalars.count,
      case let c = scalars[i],
      (c >= "0" && c <= "9") || c == "-" || c == "+" || c == "." || c == "e" || c == "E"
    {
      i += 1
    }
    var text = String.UnicodeScalarView()
    text.append(contentsOf: scalars[start..<i])
    let literal = String(text)
    guard JSONValue.isValidNumberLiteral(literal) else {
      i = start
      throw error("invalid number '\(literal)'; numbers are written as in JSON (no leading '+' or zeros)")
    }
    return .number(literal)
  }

  private mutating func parseArray() throws -> JSONValue {
    try nested { try $0.parseArrayBody() }
  }

  private mutating func parseArrayBody() throws -> JSONValue {
    i += 1
    var elements: [JSONValue] = []
    skipSpace()
    if consume("]") { return .array(elements) }
    repeat {
      skipSpace()
      guard let element = try parseLiteral() else {
        if i < scalars.count && scalars[i] == "'" { throw singleQuoted() }
        if i < scalars.count && Self.isIdentifierStart(scalars[i]) {
          let word = tokenText()
          throw error("'\(word)' in the array is a bare word: quote text as \"\(word)\"")
        }
        throw error("expected a JSON value in the array")
      }
      elements.append(element)
    } while consume(",")
    guard consume("]") else { throw error("expected ',' or ']' in the array", expectedHere: true) }
    return .array(elements)
  }

  private mutating func parseObject() throws -> JSONValue {
    try nested { try $0.parseObjectBody() }
  }

  private mutating func parseObjectBody() throws -> JSONValue {
    i += 1
    var object = JSONObject()
    skipSpace()
    if consume("}") { return .object(object) }
    repeat {
      skipSpace()
      guard i < scalars.count, scalars[i] == "\"", case .string(let key) = try parseString() else {
        throw error("expected a string key in the object")
      }
      guard consume(":") else { throw error("expected ':' after the key", expectedHere: true) }
      skipSpace()
      guard let value = try parseLiteral() else { throw error("expected a JSON value after ':'") }
      object[key] = value
    } while consume(",")
    guard consume("}") else { throw error("expected ',' or '}' in the object", expectedHere: true) }
    return .object(object)
  }

  /// The error for text in single quotes, which JSON does not take.
  private func singleQuoted() -> FolioError {
    var j = i + 1
    var text = String.UnicodeScalarView()
    while j < scalars.count && scalars[j] != "'" && j - i < 40 {
      text.append(scalars[j])
      j += 1
    }
    return error("strings take double quotes, as in JSON: write \"\(String(text))\"")
  }

  // MARK: Scanning

  private mutating func skipSpace() {
    while i < scalars.count
      && (scalars[i] == " " || scalars[i] == "\t" || scalars[i] == "\n" || scalars[i] == "\r")
    {
      i += 1
    }
  }

  private func peek(_ symbol: String) -> Bool {
    var j = i
    for s in symbol.unicodeScalars {
      guard j < scalars.count, scalars[j] == s else { return false }
      j += 1
    }
    return true
  }

  /// Whether `word` is next and not the start of a longer identifier.
  private func peekWord(_ word: String) -> Bool {
    guard peek(word) else { return false }
    let end = i + word.unicodeScalars.count
    return end == scalars.count || !Self.isIdentifierPart(scalars[end])
  }

  private mutating func consume(_ symbol: String) -> Bool {
    skipSpace()
    return consumeImmediate(symbol)
  }

  private mutating func consumeImmediate(_ symbol: String) -> Bool {
    guard peek(symbol) else { return false }
    i += symbol.unicodeScalars.count
    return true
  }

  /// The token at the current position, for messages.
  private func tokenText() -> String {
    guard i < scalars.count else { return "end of expression" }
    var text = String.UnicodeScalarView()
    var j = i
    if Self.isIdentifierPart(scalars[j]) {
      while j < scalars.count && Self.isIdentifierPart(scalars[j]) && j - i < 20 {
        text.append(scalars[j])
        j += 1
      }
    } else {
      text.append(scalars[j])
    }
    return String(text)
  }

  private func error(_ message: String, expectedHere: Bool = false) -> FolioError {
    var line = 1
    var column = 1
    for k in 0..<Swift.min(i, scalars.count) {
      if scalars[k] == "\n" {
        line += 1
        column = 1
      } else {
        column += 1
      }
    }
    var text = message
    if expectedHere {
      text = text.trimmingSuffix(" ") + (i < scalars.count ? ", found '\(tokenText())'" : ", found the end")
    }
    return FolioError(.invalidQuery, text, location: .init(file: source, line: line, column: column))
  }
}

extension String {
  fileprivate func trimmingSuffix(_ suffix: Character) -> String {
    var copy = self
    while copy.last == suffix { copy.removeLast() }
    return copy
  }
}
