/// A regular expression that matches in time linear in its input: the
/// ECMA-262 syntax JSON Schema's `pattern` uses, compiled to a Thompson
/// NFA and run as a set of states that advances one Unicode scalar at a
/// time, never backtracking.
///
/// So `^(a+)+$` against any string costs the string's length times the
/// program's size, where a backtracking engine (Swift's `Regex`, PCRE)
/// takes time exponential in the string. The price is what needs
/// backtracking to mean anything: backreferences (`\1`, `\k<name>`) and
/// lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`) are refused when the pattern
/// is compiled, with the position and the reason.
///
/// What it reads: literals and escapes (`\t \n \v \f \r \0 \cX \xHH \uHHHH
/// \u{H…}` and any escaped punctuation), `.`, classes (`[a-z]`, `[^…]`),
/// `\d \D \w \W \s \S`, `\p{…}` and `\P{…}` (general categories by short
/// or long name, `Any`, `ASCII`, `Alphabetic`, `White_Space`), anchors `^`
/// `$` and `\b \B`, groups (`(…)`, `(?:…)`, `(?<name>…)`), `|`, and the
/// quantifiers `* + ? {n} {n,} {n,m}` (lazy or not: only whether there is a
/// match counts). A match anywhere in the string counts, as JSON Schema
/// says; `^` and `$` anchor to its ends. Scalars are matched one by one, as
/// ECMA-262's `u` mode does.
///
/// ```swift
/// let regex = try LinearRegex("^[a-z]+(-[a-z]+)*$")
/// regex.matches("foo-bar")  // true
/// ```
struct LinearRegex: Sendable {
  /// A pattern that cannot be compiled: what, and where (a 0-based offset
  /// in Unicode scalars).
  struct SyntaxError: Error, Sendable, CustomStringConvertible {
    var message: String
    var offset: Int
    var description: String { "\(message) (at character \(offset + 1) of the pattern)" }
  }

  /// The most instructions a pattern may compile to: counted repetition
  /// copies its operand, so `(a{100}){100}` would otherwise be large.
  static let maxProgramSize = 20_000

  enum Assertion: Sendable {
    case start, end, wordBoundary, notWordBoundary
  }

  enum Instruction: Sendable {
    /// Consume one scalar in the class.
    case consume(ScalarClass)
    /// Go on at both targets.
    case split(Int, Int)
    case jump(Int)
    /// Go on only where the assertion holds.
    case assert(Assertion)
    case accept
  }

  let program: [Instruction]

  /// Compiles `pattern`.
  /// - Throws: ``SyntaxError`` with the position and the reason.
  init(_ pattern: String) throws(SyntaxError) {
    var parser = Parser(Array(pattern.unicodeScalars))
    let tree = try parser.parseAll()
    var compiler = Compiler()
    try compiler.emit(tree)
    compiler.program.append(.accept)
    program = compiler.program
  }

  /// Whether the pattern matches anywhere in `text`.
  func matches(_ text: String) -> Bool {
    var steps = 0
    return matches(text, steps: &steps)
  }

  /// ``matches(_:)``, counting in `steps` the states it visits: never more
  /// than the program's size for each scalar of `text`, and one more.
  func matches(_ text: String, steps: inout Int) -> Bool {
    let scalars = Array(text.unicodeScalars)
    var current = StateSet(count: program.count)
    var next = StateSet(count: program.count)
    var stack: [Int] = []
    for position in 0...scalars.count {
      let before = position > 0 ? scalars[position - 1] : nil
      let after = position < scalars.count ? scalars[position] : nil
      // A match may start anywhere: a new thread at every position.
      if addClosure(0, to: &current, before: before, after: after, stack: &stack, steps: &steps) {
        return true
      }
      guard let scalar = after else { break }
      next.clear()
      for state in current.members {
        guard case .consume(let set) = program[state], set.contains(scalar) else { continue }
        let following = position + 1 < scalars.count ? scalars[position + 1] : nil
        if addClosure(state + 1, to: &next, before: scalar, after: following, stack: &stack, steps: &steps) {
          return true
        }
      }
      swap(&current, &next)
    }
    return false
  }

  /// Adds `start` and every state reachable from it without consuming,
  /// where the assertions hold between `before` and `after`; true when
  /// that reaches `accept`. Only `consume` states are kept in `set`.
  private func addClosure(
    _ start: Int, to set: inout StateSet, before: Unicode.Scalar?, after: Unicode.Scalar?, stack: inout [Int],
    steps: inout Int
  ) -> Bool {
    stack.append(start)
    while let state = stack.popLast() {
      guard set.visit(state) else { continue }
      steps += 1
      switch program[state] {
      case .consume: set.members.append(state)
      case .accept:
        stack.removeAll()
        return true
      case .jump(let target): stack.append(target)
      case .split(let first, let second):
        stack.append(second)
        stack.append(first)
      case .assert(let assertion):
        if Self.holds(assertion, before: before, after: after) { stack.append(state + 1) }
      }
    }
    return false
  }

  private static func holds(_ assertion: Assertion, before: Unicode.Scalar?, after: Unicode.Scalar?) -> Bool {
    switch assertion {
    case .start: return before == nil
    case .end: return after == nil
    case .wordBoundary, .notWordBoundary:
      let boundary = (before.map(ScalarClass.isWord) ?? false) != (after.map(ScalarClass.isWord) ?? false)
      return boundary == (assertion == .wordBoundary)
    }
  }

  /// The states of one step: a list, and a mark per state of the
  /// generation that last visited it, so clearing costs nothing.
  private struct StateSet {
    var members: [Int] = []
    private var marks: [UInt32]
    private var generation: UInt32 = 1

    init(count: Int) { marks = [UInt32](repeating: 0, count: count) }

    mutating func clear() {
      members.removeAll(keepingCapacity: true)
      generation &+= 1
      if generation == 0 {
        for i in marks.indices { marks[i] = 0 }
        generation = 1
      }
    }

    /// Marks `state`; false when it was already marked in this generation.
    mutating func visit(_ state: Int) -> Bool {
      if marks[state] == generation { return false }
      marks[state] = generation
      return true
    }
  }
}

extension LinearRegex {
  /// The parsed pattern.
  indirect enum Tree: Sendable {
    case empty
    case one(ScalarClass)
    case sequence([Tree])
    case choice([Tree])
    case repetition(Tree, min: Int, max: Int?)
    case assertion(Assertion)
  }

  /// Recursive descent over the pattern's scalars.
  struct Parser {
    let scalars: [Unicode.Scalar]
    var offset = 0
    var depth = 0

    init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

    var peek: Unicode.Scalar? { offset < scalars.count ? scalars[offset] : nil }

    func error(_ message: String, at position: Int? = nil) -> SyntaxError {
      SyntaxError(message: message, offset: position ?? offset)
    }

    mutating func parseAll() throws(SyntaxError) -> Tree {
      let tree = try parseChoice()
      if let scalar = peek {
        throw error(scalar == ")" ? "unmatched ')'" : "unexpected '\(scalar)'")
      }
      return tree
    }

    mutating func parseChoice() throws(SyntaxError) -> Tree {
      depth += 1
      defer { depth -= 1 }
      // The parser recurses per group; deeper than this is not a pattern
      // anyone writes, and would exhaust the stack.
      if depth > 200 { throw error("groups nest more than 200 deep") }
      var branches = [try parseSequence()]
      while peek == "|" {
        offset += 1
        branches.append(try parseSequence())
      }
      return branches.count == 1 ? branches[0] : .choice(branches)
    }

    mutating func parseSequence() throws(SyntaxError) -> Tree {
      var items: [Tree] = []
      while let scalar = peek, scalar != "|", scalar != ")" {
        let start = offset
        var atom = try parseAtom()
        if let (min, max) = try parseQuantifier() {
          if case .assertion = atom { throw error("nothing to repeat before a quantifier", at: start) }
          atom = .repetition(atom, min: min, max: max)
        }
        items.append(atom)
      }
      return items.count == 1 ? items[0] : (items.isEmpty ? .empty : .sequence(items))
    }

    /// `* + ? {n} {n,} {n,m}`, and the `?` that makes one lazy.
    mutating func parseQuantifier() throws(SyntaxError) -> (Int, Int?)? {
      guard let scalar = peek else { return nil }
      var bounds: (Int, Int?)
      switch scalar {
      case "*": bounds = (0, nil)
      case "+": bounds = (1, nil)
      case "?": bounds = (0, 1)
      case "{":
        let brace = offset
        guard let counted = parseBraces() else { return nil }
        bounds = counted
        if let max = bounds.1, max < bounds.0 {
          throw error("the quantifier {\(bounds.0),\(max)} has its numbers out of order", at: brace)
        }
        offset -= 1  // parseBraces stopped after '}'; the shared step below moves past it
      default: return nil
      }
      offset += 1
      if peek == "?" { offset += 1 }
      if let next = peek,
        next == "*" || next == "+" || next == "?" || (next == "{" && lookahead { $0.parseBraces() })
      {
        throw error("nothing to repeat: two quantifiers in a row")
      }
      return bounds
    }

    private func lookahead(_ parse: (inout Parser) -> (Int, Int?)?) -> Bool {
      var copy = self
      return parse(&copy) != nil
    }

    /// `{n}`, `{n,}` or `{n,m}` at `offset`, leaving `offset` after `}`;
    /// nil (and `offset` unchanged) when the brace is a literal one.
    mutating func parseBraces() -> (Int, Int?)? {
      let start = offset
      offset += 1
      func number(_ parser: inout Parser) -> Int? {
        var value: Int?
        while let scalar = parser.peek, let digit = Int(String(scalar)), scalar.isASCII {
          value = min((value ?? 0) * 10 + digit, 1_000_000)
          parser.offset += 1
        }
        return value
      }
      guard let low = number(&self) else {
        offset = start
        return nil
      }
      var high: Int? = low
      if peek == "," {
        offset += 1
        high = number(&self)
      }
      guard peek == "}" else {
        offset = start
        return nil
      }
      offset += 1
      return (low, high)
    }

    mutating func parseAtom() throws(SyntaxError) -> Tree {
      let start = offset
      let scalar = scalars[offset]
      offset += 1
      switch scalar {
      case "^": return .assertion(.start)
      case "$": return .assertion(.end)
      case ".": return .one(ScalarClass(.notLineTerminator))
      case "(":
        if peek == "?" {
          let kind = scalars[(offset + 1)...].prefix(2)
          if kind.first == ":" {
            offset += 2
          } else if kind.first == "=" || kind.first == "!" || kind.elementsEqual(["<", "="])
            || kind.elementsEqual(["<", "!"])
          {
            throw error(
              "lookaround ('(?=', '(?!', '(?<=', '(?<!') needs backtracking; Folio's patterns match in time linear in the string, so they leave it out",
              at: start)
          } else if kind.first == "<" {
            offset += 2
            while let name = peek, name != ">" { offset += 1 }
            guard peek == ">" else { throw error("a group name has no closing '>'", at: start) }
            offset += 1
          } else {
            throw error("'(?' must be followed by ':', or '<name>'", at: start)
          }
        }
        let inner = try parseChoice()
        guard peek == ")" else { throw error("'(' has no matching ')'", at: start) }
        offset += 1
        return inner
      case ")": throw error("unmatched ')'", at: start)
      case "[": return .one(try parseClass(start: start))
      case "*", "+", "?": throw error("nothing to repeat before '\(scalar)'", at: start)
      case "{":
        offset -= 1
        if parseBraces() != nil { throw error("nothing to repeat before '{'", at: start) }
        offset += 1
        return .one(ScalarClass(scalar))
      case "\\":
        return try parseEscape(start: start)
      default:
        return .one(ScalarClass(scalar))
      }
    }

    mutating func parseEscape(start: Int) throws(SyntaxError) -> Tree {
      guard let scalar = peek else { throw error("the pattern ends with a lone '\\'", at: start) }
      switch scalar {
      case "b":
        offset += 1
        return .assertion(.wordBoundary)
      case "B":
        offset += 1
        return .assertion(.notWordBoundary)
      case "1"..."9":
        throw error(
          "backreferences ('\\\(scalar)') need backtracking; Folio's patterns match in time linear in the string, so they leave them out",
          at: start)
      case "k" where scalars.count > offset + 1 && scalars[offset + 1] == "<":
        throw error(
          "backreferences ('\\k<name>') need backtracking; Folio's patterns match in time linear in the string, so they leave them out",
          at: start)
      default:
        return .one(try parseClassEscape(start: start, inClass: false))
      }
    }

    /// An escape that stands for scalars (after the `\`), in a class or not.
    mutating func parseClassEscape(start: Int, inClass: Bool) throws(SyntaxError) -> ScalarClass {
      let scalar = scalars[offset]
      offset += 1
      switch scalar {
      case "d": return ScalarClass(.digit)
      case "D": return ScalarClass(.digit, negated: true)
      case "w": return ScalarClass(.word)
      case "W": return ScalarClass(.word, negated: true)
      case "s": return ScalarClass(.space)
      case "S": return ScalarClass(.space, negated: true)
      case "t": return ScalarClass("\t")
      case "n": return ScalarClass("\n")
      case "v": return ScalarClass("\u{0B}")
      case "f": return ScalarClass("\u{0C}")
      case "r": return ScalarClass("\r")
      case "b" where inClass: return ScalarClass("\u{08}")
      case "0":
        if let next = peek, ("0"..."9").contains(next) {
          throw error("octal escapes such as '\\0\(next)' are not ECMA-262 in unicode mode", at: start)
        }
        return ScalarClass("\0")
      case "c":
        guard let letter = peek, letter.isASCII, letter.properties.isAlphabetic else {
          throw error("'\\c' must be followed by a letter", at: start)
        }
        offset += 1
        return ScalarClass(Unicode.Scalar(letter.value % 32)!)
      case "x": return ScalarClass(try hexScalar(digits: 2, start: start))
      case "u": return try parseUnicodeEscape(start: start)
      case "p", "P": return try parsePropertyEscape(scalar, start: start)
      default:
        if scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)) {
          throw error("unknown escape '\\\(scalar)'", at: start)
        }
        return ScalarClass(scalar)
      }
    }

    /// `\u{…}` (1 to 6 hex digits), or `\uXXXX`, a surrogate pair of two
    /// of them making one scalar (after the `u`).
    mutating func parseUnicodeEscape(start: Int) throws(SyntaxError) -> ScalarClass {
      if peek == "{" {
        offset += 1
        var value: UInt32 = 0
        var count = 0
        while let digit = peek, let nibble = digit.hexValue {
          value = value &* 16 &+ nibble
          count += 1
          offset += 1
          if count > 6 { break }
        }
        guard count > 0, peek == "}", let made = Unicode.Scalar(value) else {
          throw error("'\\u{…}' must hold 1 to 6 hex digits naming a Unicode scalar", at: start)
        }
        offset += 1
        return ScalarClass(made)
      }
      let unit = try hexValue(digits: 4, start: start)
      if (0xD800...0xDBFF).contains(unit), offset + 1 < scalars.count, scalars[offset] == "\\",
        scalars[offset + 1] == "u"
      {
        // A high surrogate then a low one: one code point, as ECMA-262
        // reads `\uD83D\uDE00` (a JSON string holds the scalar).
        var lookahead = self
        lookahead.offset += 2
        if let low = try? lookahead.hexValue(digits: 4, start: offset), (0xDC00...0xDFFF).contains(low) {
          self = lookahead
          return ScalarClass(Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!)
        }
      }
      // A lone surrogate: no scalar of a JSON string is one.
      return Unicode.Scalar(unit).map { ScalarClass($0) } ?? ScalarClass.nothing
    }

    /// `\p{name}` or `\P{name}` (after the `p` or `P`).
    mutating func parsePropertyEscape(_ scalar: Unicode.Scalar, start: Int) throws(SyntaxError) -> ScalarClass
    {
      guard peek == "{" else { throw error("'\\\(scalar)' must be followed by '{name}'", at: start) }
      offset += 1
      var name = ""
      while let character = peek, character != "}" {
        name.unicodeScalars.append(character)
        offset += 1
      }
      guard peek == "}" else { throw error("'\\\(scalar){' has no closing '}'", at: start) }
      offset += 1
      guard let property = ScalarClass.property(name) else {
        throw error(
          "unknown property '\(name)': Folio knows general categories (L, Letter, Lu, Nd, P, …), Any, ASCII, Alphabetic and White_Space",
          at: start)
      }
      return ScalarClass(property, negated: scalar == "P")
    }

    mutating func hexScalar(digits: Int, start: Int) throws(SyntaxError) -> Unicode.Scalar {
      let value = try hexValue(digits: digits, start: start)
      // Two hex digits always name a scalar.
      return Unicode.Scalar(value) ?? "\u{FFFD}"
    }

    mutating func hexValue(digits: Int, start: Int) throws(SyntaxError) -> UInt32 {
      var value: UInt32 = 0
      for _ in 0..<digits {
        guard let digit = peek, let nibble = digit.hexValue else {
          throw error("expected \(digits) hex digits after '\\\(scalars[start + 1])'", at: start)
        }
        value = value * 16 + nibble
        offset += 1
      }
      return value
    }

    mutating func parseClass(start: Int) throws(SyntaxError) -> ScalarClass {
      var set = ScalarClass()
      if peek == "^" {
        set.negated = true
        offset += 1
      }
      while true {
        guard let scalar = peek else { throw error("'[' has no matching ']'", at: start) }
        if scalar == "]" {
          offset += 1
          return set
        }
        let itemStart = offset
        let low = try classAtom()
        if peek == "-", offset + 1 < scalars.count, scalars[offset + 1] != "]" {
          offset += 1
          let high = try classAtom()
          guard let a = low.single, let b = high.single else {
            throw error("a range in a class must run between two characters", at: itemStart)
          }
          guard a <= b else { throw error("the range in a class is out of order", at: itemStart) }
          set.ranges.append(a...b)
        } else {
          set.ranges += low.ranges
          set.named += low.named
        }
      }
    }

    /// One member of a class: a scalar or an escape.
    mutating func classAtom() throws(SyntaxError) -> ScalarClass {
      let start = offset
      let scalar = scalars[offset]
      offset += 1
      guard scalar == "\\" else { return ScalarClass(scalar) }
      guard peek != nil else { throw error("the pattern ends with a lone '\\'", at: start) }
      return try parseClassEscape(start: start, inClass: true)
    }
  }

  /// Turns a tree into instructions.
  struct Compiler {
    var program: [Instruction] = []

    mutating func emit(_ tree: Tree) throws(SyntaxError) {
      if program.count > LinearRegex.maxProgramSize {
        throw SyntaxError(
          message:
            "the pattern is too large once its counted repetitions are written out (over \(LinearRegex.maxProgramSize) steps)",
          offset: 0)
      }
      switch tree {
      case .empty: break
      case .one(let set): program.append(.consume(set))
      case .assertion(let assertion): program.append(.assert(assertion))
      case .sequence(let items): for item in items { try emit(item) }
      case .choice(let branches):
        // split L1, next; L1: branch; jump end; next: split …
        var jumps: [Int] = []
        for (index, branch) in branches.enumerated() {
          if index < branches.count - 1 {
            let split = program.count
            program.append(.split(split + 1, -1))
            try emit(branch)
            jumps.append(program.count)
            program.append(.jump(-1))
            program[split] = .split(split + 1, program.count)
          } else {
            try emit(branch)
          }
        }
        for jump in jumps { program[jump] = .jump(program.count) }
      case .repetition(let item, let min, let max):
        // An item that compiles to nothing (`(?:)`, `a{0}`) repeats as
        // nothing: writing out its copies would only spin.
        let before = program.count
        try emit(item)
        if program.count == before { return }
        program.removeLast(program.count - before)
        for _ in 0..<min { try emit(item) }
        if let max {
          // Each optional copy may be skipped, and skipping one skips the rest.
          var exits: [Int] = []
          for _ in min..<max {
            exits.append(program.count)
            program.append(.split(program.count + 1, -1))
            try emit(item)
          }
          for exit in exits { program[exit] = .split(exit + 1, program.count) }
        } else {
          let loop = program.count
          program.append(.split(loop + 1, -1))
          try emit(item)
          program.append(.jump(loop))
          program[loop] = .split(loop + 1, program.count)
        }
      }
    }
  }
}

extension ScalarClass {
  /// The one scalar of a class made of one scalar; nil otherwise.
  fileprivate var single: UInt32? {
    guard named.isEmpty, !negated, ranges.count == 1, ranges[0].lowerBound == ranges[0].upperBound else {
      return nil
    }
    return ranges[0].lowerBound
  }
}

extension Unicode.Scalar {
  fileprivate var hexValue: UInt32? {
    switch value {
    case 0x30...0x39: value - 0x30
    case 0x41...0x46: value - 0x41 + 10
    case 0x61...0x66: value - 0x61 + 10
    default: nil
    }
  }
}
