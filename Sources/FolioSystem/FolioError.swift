/// An error raised by Folio.
///
/// Every error carries a ``Code`` that programs can match on, a human message,
/// and where it happened: a file position for parse errors, a table and pk for
/// document errors, or the C function or syscall that failed.
///
/// ```swift
/// do {
///     try store.apply(table: "todos", pk: "a", op: .update,
///                     columns: [:], transforms: ["views": ["op": "nope"]])
/// } catch let error as FolioError where error.code == .localConstraint {
///     print(error)   // error: LOCAL_CONSTRAINT: transform for 'views' has unknown op 'nope'
/// }
/// ```
public struct FolioError: Error, CustomStringConvertible, Sendable, Equatable {
  /// A machine-readable error category.
  public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code's text, as printed in messages.
    public let rawValue: String
    /// Creates a code from its text.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The code's text.
    public var description: String { rawValue }

    /// A mutation broke a local rule: a malformed transform, a duplicate
    /// insert, a key column that disagrees with the pk (the transform rules, docs/architecture.md).
    public static let localConstraint = Code(rawValue: "LOCAL_CONSTRAINT")
    /// Text that is not valid JSON.
    public static let invalidJSON = Code(rawValue: "INVALID_JSON")
    /// A bad `folio.yaml`.
    public static let invalidConfig = Code(rawValue: "INVALID_CONFIG")
    /// A pk that cannot be stored safely.
    public static let invalidPK = Code(rawValue: "INVALID_PK")
    /// A document that is valid JSON but not a valid Folio document.
    public static let invalidDocument = Code(rawValue: "INVALID_DOCUMENT")
    /// A table that `folio.yaml` does not define.
    public static let unknownTable = Code(rawValue: "UNKNOWN_TABLE")
    /// A table a partial replica does not hold (see `Store.absentTables`).
    public static let tableAbsent = Code(rawValue: "TABLE_ABSENT")
    /// Something that was asked for does not exist.
    public static let notFound = Code(rawValue: "NOT_FOUND")
    /// No `folio.yaml` in the directory or any parent.
    public static let storeNotFound = Code(rawValue: "STORE_NOT_FOUND")
    /// Another process held the store lock for too long.
    public static let locked = Code(rawValue: "LOCKED")
    /// A syscall failed.
    public static let io = Code(rawValue: "IO")
    /// A libgit2 call failed.
    public static let git = Code(rawValue: "GIT")
    /// A command line that does not parse.
    public static let usage = Code(rawValue: "USAGE")
    /// A remote that cannot be reached, or that has no such branch.
    public static let remote = Code(rawValue: "REMOTE")
    /// The remote refused the push (someone pushed first, or a hook said no).
    public static let pushRejected = Code(rawValue: "PUSH_REJECTED")
    /// The remote asked for credentials that Folio could not find.
    public static let credentials = Code(rawValue: "CREDENTIALS")
    /// A sync would overwrite a file someone changed since the last commit.
    public static let wouldOverwrite = Code(rawValue: "WOULD_OVERWRITE")
    /// A file outside the tables that git's three-way merge could not resolve.
    public static let conflict = Code(rawValue: "CONFLICT")
    /// The user stopped a long operation (Ctrl-C) before it could change anything.
    public static let interrupted = Code(rawValue: "INTERRUPTED")
    /// A path from git or from the working tree that Folio refuses to write
    /// or follow: `..`, `.git` in any spelling, a symlink, a gitlink, or a
    /// name too long for the file system.
    public static let unsafePath = Code(rawValue: "UNSAFE_PATH")
    /// An op stamped further ahead of local time than the configured bound.
    public static let clockSkew = Code(rawValue: "CLOCK_SKEW")
    /// Untrusted input past a documented size or depth limit.
    public static let tooLarge = Code(rawValue: "TOO_LARGE")
    /// An ssh host key that is unknown or has changed.
    public static let hostKey = Code(rawValue: "HOST_KEY")
    /// A document that breaks its table's JSON Schema (`schema:` in
    /// `folio.yaml`); nothing was written.
    public static let schemaViolation = Code(rawValue: "SCHEMA_VIOLATION")
    /// A query that cannot run: an invalid combination of calls, a bad range
    /// value, a field path or a filter expression that does not parse.
    public static let invalidQuery = Code(rawValue: "INVALID_QUERY")
  }

  /// A 1-based position in a named file.
  public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
    /// The file, as the user should see it (usually relative to the store).
    public var file: String
    /// The 1-based line.
    public var line: Int
    /// The 1-based column, counted in Unicode scalars.
    public var column: Int
    /// Creates a location.
    public init(file: String, line: Int, column: Int) {
      self.file = file
      self.line = line
      self.column = column
    }
    /// `file:line:col`.
    public var description: String { "\(file):\(line):\(column)" }
  }

  /// The error category.
  public var code: Code
  /// What went wrong, and where it helps, how to fix it.
  public var message: String
  /// The file position, for errors in a parsed file.
  public var location: SourceLocation?
  /// The source line at ``location`` with a caret under its column, as a
  /// compiler prints it below the error; nil when the text is not at hand.
  public var excerpt: String?
  /// The file or directory involved, for errors without a position.
  public var path: String?
  /// The table involved, if any.
  public var table: String?
  /// The pk involved, if any.
  public var pk: String?
  /// The C function or syscall that failed, if any.
  public var function: String?
  /// The `errno` the failed call set, for an `IO` error from a syscall;
  /// how a caller tells one cause (`EPIPE`: the reader left) from another
  /// without reading the message.
  public var systemError: Int32?
  /// What the user can do about it, named rather than worded: the library
  /// words it in its API's terms (``description``), and the `folio` tool
  /// as a command to run. The ``message`` itself names neither.
  public var remedy: Remedy?

  /// Creates an error.
  public init(
    _ code: Code, _ message: String, location: SourceLocation? = nil, path: String? = nil,
    table: String? = nil, pk: String? = nil, function: String? = nil, remedy: Remedy? = nil
  ) {
    self.code = code
    self.message = message
    self.location = location
    self.path = path
    self.table = table
    self.pk = pk
    self.function = function
    self.remedy = remedy
  }

  /// Compiler-style text: ``headline``, then the remedy in the library's
  /// terms on a line of its own.
  public var description: String {
    headline + (remedy.map { "\n" + $0.advice } ?? "")
  }

  /// `file:line:col: error: …` when there is a position, otherwise
  /// `error: CODE: …`; the remedy is left for the caller to word.
  public var headline: String {
    if let location {
      return "\(location): error: \(message)"
    }
    var text = "error: \(code): "
    if let path { text += "\(path): " }
    text += message
    if let function { text += " (\(function))" }
    return text
  }

  /// The same error, placed in `file` (used when a parser ran on a buffer
  /// whose origin only the caller knows).
  public func inFile(_ file: String) -> FolioError {
    var copy = self
    if copy.location != nil { copy.location!.file = file } else { copy.path = file }
    return copy
  }
}
