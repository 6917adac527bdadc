internal import CYAML
import FolioSystem

/// Reads one YAML document into a ``YAMLNode`` tree, through libyaml's event
/// API.
///
/// The class owns the `yaml_parser_t` and the input buffer. libyaml keeps
/// pointers to both for as long as the parser lives, so both are allocated
/// with `UnsafeMutablePointer.allocate` (stable addresses, unlike a Swift
/// array's storage) and freed together in `deinit`, the parser first.
///
/// The parser is built for small, hostile-or-careless input:
/// - aliases are rejected outright, so an alias bomb ("billion laughs") costs
///   nothing: the tree can never be larger than the text;
/// - nesting depth and the number of nodes are capped, so neither a deep
///   `[[[[…` nor a flood of tiny nodes can exhaust the stack or the heap;
/// - a second document in the stream is an error, not silently ignored.
///
/// Every error is a ``FolioError`` with code `.invalidConfig` and a 1-based
/// position in `file`.
final class YAMLParser {
  /// The deepest nesting accepted. The config itself needs four levels; the
  /// cap keeps the tree (and the recursion that releases it) small.
  static let maxDepth = 64
  /// The most nodes accepted in one document: far more than any config
  /// needs, small enough that memory stays bounded whatever the input.
  static let maxNodes = 100_000

  private let parser: UnsafeMutablePointer<yaml_parser_t>
  private let input: UnsafeMutablePointer<UInt8>
  private let inputCount: Int
  private let file: String

  /// Prepares a parser over a copy of `bytes`.
  ///
  /// - Parameter file: the name that errors report, such as `folio.yaml`.
  init(bytes: some Collection<UInt8>, file: String) throws {
    let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
    guard yaml_parser_initialize(parser) == 1 else {
      // Nothing for yaml_parser_delete to free: initialize cleans up after
      // itself when it fails.
      parser.deallocate()
      throw FolioError(
        .invalidConfig, "cannot start the YAML parser (out of memory)",
        location: .init(file: file, line: 1, column: 1), function: "yaml_parser_initialize")
    }
    // At least one byte, so that an empty input still has a valid address.
    let input = UnsafeMutablePointer<UInt8>.allocate(capacity: max(bytes.count, 1))
    var count = 0
    for byte in bytes {
      (input + count).initialize(to: byte)
      count += 1
    }
    yaml_parser_set_input_string(parser, input, count)
    self.parser = parser
    self.input = input
    self.inputCount = count
    self.file = file
  }

  deinit {
    yaml_parser_delete(parser)
    parser.deallocate()
    input.deallocate()
  }

  /// Parses the stream and returns its only document's root node.
  ///
  /// - Returns: the root, or `nil` when the stream holds no document at all
  ///   (an empty file, or only comments).
  /// - Throws: ``FolioError`` `.invalidConfig` for a syntax error, an alias,
  ///   an unsupported tag, a duplicate or non-scalar mapping key, too deep
  ///   nesting, too many nodes, or a second document.
  func parseSingleDocument() throws -> YAMLNode? {
    var builder = TreeBuilder()
    var documents = 0
    var nodes = 0
    var pendingFlowError: FolioError?
    while true {
      var event = yaml_event_t()
      guard yaml_parser_parse(parser, &event) == 1 else { throw syntaxError() }
      defer { yaml_event_delete(&event) }
      if let pendingFlowError { throw pendingFlowError }
      let line = Int(event.start_mark.line) + 1
      let column = Int(event.start_mark.column) + 1

      switch event.type {
      case YAML_STREAM_END_EVENT:
        return builder.root

      case YAML_DOCUMENT_START_EVENT:
        documents += 1
        if documents > 1 {
          // A second document would otherwise be ignored without a word, and
          // the person editing it would wonder why nothing changed.
          throw error(
            "\(file) must hold a single YAML document; remove this second one", line, column)
        }

      case YAML_ALIAS_EVENT:
        let name = string(event.data.alias.anchor) ?? ""
        throw error(
          "aliases (*\(name)) are not supported in \(file); write the value out", line, column)

      case YAML_SCALAR_EVENT:
        nodes += 1
        try checkNodeCount(nodes, line, column)
        let scalar = event.data.scalar
        let text =
          scalar.value.map {
            String(decoding: UnsafeBufferPointer(start: $0, count: scalar.length), as: UTF8.self)
          } ?? ""
        let isPlain = scalar.style == YAML_PLAIN_SCALAR_STYLE
        if isPlain && event.end_mark.line > event.start_mark.line {
          let continued = continuedPlainScalar(
            text, line: line, column: column, last: Int(event.end_mark.line) + 1,
            inFlow: builder.stack.last?.isFlow == true)
          // Inside [ ] or { }, a missing closer is the likelier mistake:
          // libyaml says so on the next event, at the opener.
          guard builder.stack.last?.isFlow == true else { throw continued }
          pendingFlowError = continued
        }
        let resolved = try resolve(text, tag: string(scalar.tag), isPlain: isPlain, line, column)
        try add(YAMLNode(content: .scalar(text, resolved), line: line, column: column), &builder)

      case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
        nodes += 1
        try checkNodeCount(nodes, line, column)
        let isMapping = event.type == YAML_MAPPING_START_EVENT
        let tag = string(isMapping ? event.data.mapping_start.tag : event.data.sequence_start.tag)
        try checkCollectionTag(tag, isMapping: isMapping, line, column)
        if builder.stack.count >= Self.maxDepth {
          throw error("nesting is deeper than \(Self.maxDepth) levels", line, column)
        }
        let isFlow =
          isMapping
          ? event.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE
          : event.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE
        builder.stack.append(
          TreeBuilder.Frame(isMapping: isMapping, isFlow: isFlow, line: line, column: column))

      case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
        let frame = builder.stack.removeLast()
        let content: YAMLNode.Content =
          frame.isMapping ? .mapping(frame.pairs) : .sequence(frame.items)
        try add(YAMLNode(content: content, line: frame.line, column: frame.column), &builder)

      default:
        // Stream start and document end carry nothing the config needs.
        break
      }
    }
  }

  // MARK: - Building the tree

  /// The partly built tree: the collections still open, innermost last.
  /// An explicit stack, not recursion, so input depth never touches the
  /// call stack.
  private struct TreeBuilder {
    struct Frame {
      var isMapping: Bool
      /// Written in `[ ]` or `{ }`, not as a block.
      var isFlow: Bool
      var line: Int
      var column: Int
      var items: [YAMLNode] = []
      var pairs: [YAMLNode.Pair] = []
      /// A mapping key waiting for its value.
      var pendingKey: YAMLNode?
      /// Keys seen so far in this mapping, to report duplicates.
      var seen: [String: YAMLNode] = [:]
    }
    var stack: [Frame] = []
    var root: YAMLNode?
  }

  /// Adds a finished node to the innermost open collection, or makes it the
  /// root.
  private func add(_ node: YAMLNode, _ builder: inout TreeBuilder) throws {
    guard let top = builder.stack.indices.last else {
      builder.root = node
      return
    }
    if !builder.stack[top].isMapping {
      builder.stack[top].items.append(node)
    } else if let key = builder.stack[top].pendingKey {
      builder.stack[top].pairs.append(.init(key: key, value: node))
      builder.stack[top].pendingKey = nil
    } else {
      guard case .scalar(let text, _) = node.content else {
        throw error("mapping keys must be strings", node.line, node.column)
      }
      if let first = builder.stack[top].seen[text] {
        // YAML leaves duplicate keys undefined and many tools keep the last
        // one silently; a config must not quietly drop a setting.
        throw error(
          "duplicate key '\(text)' (first defined at line \(first.line), column \(first.column))",
          node.line, node.column)
      }
      builder.stack[top].seen[text] = node
      builder.stack[top].pendingKey = node
    }
  }

  // MARK: - Scalars and tags

  private static let nullWords: Set<String> = ["", "~", "null", "Null", "NULL"]
  private static let yamlTagPrefix = "tag:yaml.org,2002:"

  /// Resolves a scalar as YAML's core schema does, as far as the config
  /// cares: null, a decimal integer, or text.
  private func resolve(
    _ text: String, tag: String?, isPlain: Bool, _ line: Int, _ column: Int
  ) throws -> YAMLNode.Resolved {
    switch tag {
    case nil:
      guard isPlain else { return .string }
      if Self.nullWords.contains(text) { return .null }
      if let value = Self.decimalInteger(text) { return .integer(value) }
      return .plain
    case "!", Self.yamlTagPrefix + "str":
      return .string
    case Self.yamlTagPrefix + "null":
      return .null
    case Self.yamlTagPrefix + "int":
      guard let value = Self.decimalInteger(text) else {
        throw error("'\(text)' is tagged !!int but is not a decimal integer", line, column)
      }
      return .integer(value)
    case let tag?:
      throw error("unsupported tag '\(tag)'; \(file) takes plain values", line, column)
    }
  }

  private func checkCollectionTag(_ tag: String?, isMapping: Bool, _ line: Int, _ column: Int)
    throws
  {
    guard let tag else { return }
    let expected = Self.yamlTagPrefix + (isMapping ? "map" : "seq")
    if tag != expected {
      throw error("unsupported tag '\(tag)'; \(file) takes plain values", line, column)
    }
  }

  /// `[-+]?[0-9]+` as an `Int`, or `nil` (also on overflow).
  private static func decimalInteger(_ text: String) -> Int? {
    var digits = Substring(text)
    if digits.first == "+" || digits.first == "-" { digits = digits.dropFirst() }
    guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
      return nil
    }
    return Int(text)
  }

  // MARK: - Errors

  private func checkNodeCount(_ count: Int, _ line: Int, _ column: Int) throws {
    if count > Self.maxNodes {
      throw error("more than \(Self.maxNodes) YAML nodes; this is not a config file", line, column)
    }
  }

  private func error(_ message: String, _ line: Int, _ column: Int) -> FolioError {
    var error = FolioError(
      .invalidConfig, message, location: .init(file: file, line: line, column: column))
    error.excerpt = SourceText.excerpt(
      line: line, column: column, in: UnsafeRawBufferPointer(start: input, count: inputCount))
    return error
  }

  /// The parser's error, with libyaml's own words and position.
  private func syntaxError() -> FolioError {
    let state = parser.pointee
    let problem = state.problem.map { String(cString: $0) } ?? "unknown error"
    switch state.error {
    case YAML_MEMORY_ERROR:
      return error("out of memory while parsing YAML", 1, 1)

    case YAML_READER_ERROR:
      // The reader reports a byte offset, not a mark; turn it into a
      // position ourselves.
      let (line, column) = position(ofByte: state.problem_offset)
      var message = "invalid text: \(problem)"
      if state.problem_value != -1 {
        let value = UInt32(truncatingIfNeeded: state.problem_value)
        message +=
          problem.contains("octet")
          ? " (byte 0x\(hex(value, digits: 2)))" : " (U+\(hex(value, digits: 4)))"
      }
      return error(message, line, column)

    default:
      let mark = state.problem_mark
      let context = state.context.map { String(cString: $0) }
      if let placed = placedSyntaxError(
        problem, line: Int(mark.line) + 1, column: Int(mark.column) + 1, context: context,
        contextLine: Int(state.context_mark.line) + 1, contextColumn: Int(state.context_mark.column) + 1)
      {
        return placed
      }
      var message = "invalid YAML: \(problem)"
      if let context {
        let contextMark = state.context_mark
        if contextMark.line == mark.line && contextMark.column == mark.column {
          message += " (\(context))"
        } else {
          message +=
            " (\(context) at line \(contextMark.line + 1), column \(contextMark.column + 1))"
        }
      }
      return error(message, Int(mark.line) + 1, Int(mark.column) + 1)
    }
  }

  // MARK: - Errors placed where the mistake is

  /// libyaml reports a mistake where it gave up, which is often a line or
  /// more after it: an unclosed `[` at the next key, a missing `:` at the
  /// line after. For those it can tell, this is the error at the mistake
  /// itself, with where libyaml stopped in the message; nil for the rest.
  private func placedSyntaxError(
    _ problem: String, line: Int, column: Int, context: String?, contextLine: Int, contextColumn: Int
  ) -> FolioError? {
    let stopped = "line \(line), column \(column)"
    if let context, contextLine < line || (contextLine == line && contextColumn < column) {
      // The opener of what never ends: the mistake is on its line, not on
      // the line where the next key showed that it had not ended.
      let opener: String? =
        switch context {
        case "while parsing a flow sequence": "this '[' is never closed"
        case "while parsing a flow mapping": "this '{' is never closed"
        case "while scanning a quoted scalar": "this quoted value is never closed"
        default: nil
        }
      if let opener {
        return error("invalid YAML: \(opener): \(problem) at \(stopped)", contextLine, contextColumn)
      }
    }
    if problem == "found character that cannot start any token", scalar(line, column) == "\t" {
      return error("invalid YAML: a tab; YAML indents with spaces only", line, column)
    }
    if problem == "did not find expected key", context == "while parsing a block mapping",
      let text = lineScalars(line)
    {
      let content = String(String.UnicodeScalarView(text.drop { $0 == " " }))
      if column == contextColumn, content.hasPrefix("-") {
        return error(
          "invalid YAML: a list item ('\(content)') among the keys of a mapping; "
            + "write it as 'key: value', or indent it under a key", line, column)
      }
      if column != contextColumn, column == text.count - content.unicodeScalars.count + 1 {
        // libyaml closed the mappings the line is too shallow for, and
        // then found it deeper than the one left: it lines up with no key.
        return error(
          "invalid YAML: line \(line) is indented to column \(column), which lines up with no key above it; "
            + "indent it as the keys beside it", line, column)
      }
    }
    return nil
  }

  /// A plain value that runs over several lines: valid YAML, but in a
  /// config it is almost always a mistake on the line where it starts or
  /// the next, which would otherwise be read, without a word, as part of
  /// the value: a key without its ':', a line indented too far, a ','
  /// missing between two list items.
  private func continuedPlainScalar(
    _ text: String, line: Int, column: Int, last: Int, inFlow: Bool
  ) -> FolioError {
    var next = line + 1
    while next < last, let scalars = lineScalars(next), scalars.allSatisfy({ $0 == " " || $0 == "\t" }) {
      next += 1
    }
    let nextIndent = lineScalars(next)?.prefix { $0 == " " || $0 == "\t" }.count ?? 0
    let flattened = text.replacingNewlines()
    let first = lineScalars(line) ?? []
    let firstLine = String(String.UnicodeScalarView(first[min(column - 1, first.count)...]))
    if inFlow {
      return error(
        "'\(flattened)' runs on from line \(line) to line \(next) as one value; if these are two values, "
          + "put a ',' between them", next, nextIndent + 1)
    }
    if first.prefix(while: { $0 == " " }).count == column - 1 {
      // The value is all its line holds: a key whose ':' is missing,
      // before its value (`path data/todos`) or at the end of the line.
      if let space = firstLine.firstIndex(of: " ") {
        let key = firstLine[..<space]
        return error(
          "expected ':' after '\(key)' (write '\(key): \(firstLine[space...].drop { $0 == " " })'); "
            + "without it, line \(next) reads as more of the same text", line,
          column + key.unicodeScalars.count)
      }
      return error(
        "expected ':' after '\(firstLine)'; without it, line \(next) reads as more of the same text",
        line, first.count + 1)
    }
    return error(
      "line \(next) is indented deeper than line \(line), so it reads as more of the value '\(firstLine)' "
        + "(all of it: '\(flattened)'); indent it as the lines beside it, or, for one long value, quote it",
      next, nextIndent + 1)
  }

  /// The nearest line above `line` with something other than spaces or a
  /// comment on it, and its text.
  private func previousContentLine(before line: Int) -> (Int, [Unicode.Scalar])? {
    var above = line - 1
    while above >= 1 {
      guard let text = lineScalars(above) else { return nil }
      let content = text.drop { $0 == " " }
      if let first = content.first, first != "#" {
        // A trailing comment is not part of the line's content.
        var kept = Array(text)
        if let hash = kept.indices.first(where: { kept[$0] == "#" && $0 > 0 && kept[$0 - 1] == " " }) {
          kept.removeSubrange(hash...)
        }
        while kept.last == " " { kept.removeLast() }
        return (above, kept)
      }
      above -= 1
    }
    return nil
  }

  /// The Unicode scalar at a 1-based position, if there is one.
  private func scalar(_ line: Int, _ column: Int) -> Unicode.Scalar? {
    guard let text = lineScalars(line), column >= 1, column <= text.count else { return nil }
    return text[column - 1]
  }

  /// The scalars of 1-based line `line`, without its line break.
  private func lineScalars(_ line: Int) -> [Unicode.Scalar]? {
    let buffer = UnsafeRawBufferPointer(start: input, count: inputCount)
    guard let range = SourceText.lineRange(line, in: buffer) else { return nil }
    return Array(
      String(decoding: UnsafeRawBufferPointer(rebasing: buffer[range]), as: UTF8.self).unicodeScalars)
  }

  /// The 1-based line and column (in Unicode scalars) of a byte offset.
  private func position(ofByte offset: Int) -> (line: Int, column: Int) {
    SourceText.lineAndColumn(of: offset, in: UnsafeRawBufferPointer(start: input, count: inputCount))
  }

  private func hex(_ value: UInt32, digits: Int) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
  }

  private func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
    pointer.map { String(cString: $0) }
  }
}

extension String {
  /// The text with each line break shown as a space, for a message on one
  /// line.
  fileprivate func replacingNewlines() -> String {
    String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\n" ? " " : $0 }))
  }
}
