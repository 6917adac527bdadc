import FolioSystem

extension JSONValue {
  /// Parses one JSON text from UTF-8 bytes, strictly by RFC 8259.
  ///
  /// Whitespace may surround the value; anything else after it is an error.
  /// Numbers keep their literal text. Duplicate object keys, comments,
  /// trailing commas, invalid UTF-8 and nesting deeper than 512 levels are
  /// errors.
  ///
  /// ```swift
  /// let doc = try JSONValue(parsing: Array(#"{"id": "3f2a", "views": 1.50e+3}"#.utf8),
  ///                         file: "todos/3f2a.json")
  /// doc["views"]  // .number("1.50e+3")
  /// ```
  ///
  /// - Parameters:
  ///   - bytes: The UTF-8 text.
  ///   - file: The file named in error locations; `"<input>"` when `nil`.
  /// - Throws: `FolioError` with code `.invalidJSON` and a 1-based
  ///   line:column location (columns count Unicode scalars), for example
  ///   `todos/3f2a.json:4:17: error: expected ',' or '}' after object member, found '"'`.
  public init(parsing bytes: [UInt8], file: String? = nil) throws {
    self = try JSONParser.withThreadParser(file: file) { (parser) throws(FolioError) in
      try parser.parse(bytes)
    }
  }

  /// Parses one JSON text from a string, strictly by RFC 8259.
  ///
  /// ```swift
  /// let doc = try JSONValue(parsing: #"[1, "two", null]"#)
  /// ```
  ///
  /// - Parameters:
  ///   - text: The JSON text.
  ///   - file: The file named in error locations; `"<input>"` when `nil`.
  /// - Throws: `FolioError` with code `.invalidJSON` and a 1-based
  ///   line:column location, as the `[UInt8]` form describes.
  public init(parsing text: String, file: String? = nil) throws {
    var text = text
    self = try text.withUTF8 { (utf8) throws(FolioError) -> JSONValue in
      try JSONParser.withThreadParser(file: file) { (parser) throws(FolioError) in
        try parser.parse(UnsafeRawBufferPointer(utf8))
      }
    }
  }

  /// Parses one JSON text from UTF-8 bytes in memory, such as a mapped file,
  /// strictly by RFC 8259.
  ///
  /// ```swift
  /// let doc = try bytes.withUnsafeBytes { try JSONValue(parsing: $0, file: "a.json") }
  /// ```
  ///
  /// - Parameters:
  ///   - buffer: The UTF-8 text. The result does not refer to it.
  ///   - file: The file named in error locations; `"<input>"` when `nil`.
  /// - Throws: `FolioError` with code `.invalidJSON` and a 1-based
  ///   line:column location, as the `[UInt8]` form describes.
  public init(parsing buffer: UnsafeRawBufferPointer, file: String? = nil) throws {
    self = try JSONParser.withThreadParser(file: file) { (parser) throws(FolioError) in
      try parser.parse(buffer)
    }
  }
}
