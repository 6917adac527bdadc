import FolioSystem
import Foundation
import Glibc

extension Config {
  /// The largest config file Folio reads. A real one is a few hundred bytes;
  /// the cap keeps a wrong or hostile file from costing time and memory.
  static let maxFileSize = 1 << 20

  /// Parses and validates the text of a `folio.yaml`.
  ///
  /// ```swift
  /// let config = try Config(yaml: """
  ///   version: 1
  ///   tables:
  ///     todos:
  ///       order: [lastUpdate]
  ///       columns: {views: counter}
  ///   """)
  /// ```
  ///
  /// - Parameters:
  ///   - text: the YAML text.
  ///   - file: the name used in error messages.
  /// - Throws: ``FolioError`` with code ``FolioError/Code/invalidConfig`` and a
  ///   `file:line:col` location for any YAML syntax error or schema violation.
  public init(yaml text: String, file: String = "folio.yaml") throws {
    try self.init(bytes: text.utf8, file: file)
  }

  /// Reads and parses the file at `url`, and the tables' schema files
  /// (`schema:`), relative to its folder.
  ///
  /// ```swift
  /// let config = try Config(contentsOf: root.appending(path: Config.fileName))
  /// ```
  ///
  /// - Parameters:
  ///   - url: a file URL.
  ///   - displayName: how errors name the file, usually its path relative to
  ///     the store.
  /// - Throws: ``FolioError`` with code ``FolioError/Code/io`` when the file
  ///   cannot be read (naming the failed call), or
  ///   ``FolioError/Code/invalidConfig`` as ``init(yaml:file:)`` does, also
  ///   for a schema file that is missing, or whose keywords Folio does not
  ///   check (then placed in the schema file), or that contradicts a
  ///   column's kind.
  public init(contentsOf url: URL, displayName: String = "folio.yaml") throws {
    guard url.isFileURL else {
      throw FolioError(
        .io, "cannot read the config file: \(url) is not a file URL", path: displayName)
    }
    // A relative URL resolves against the folder it was made relative to.
    try self.init(path: url.absoluteURL.path, displayName: displayName)
  }

  /// Reads and parses the config file at `path`, as ``init(contentsOf:displayName:)``
  /// does; the store opens its config this way, without a `URL`.
  package init(path: String, displayName: String = "folio.yaml") throws {
    let bytes = try Self.readFile(path, displayName: displayName)
    let root = FileSystem.split(FileSystem.lexicalPath(path)).directory
    try self.init(bytes: bytes, file: displayName, root: root)
  }

  /// Parses raw bytes. Reading from bytes rather than a `String` lets
  /// libyaml itself report invalid UTF-8 in a file, with its position.
  package init(bytes: some Collection<UInt8>, file: String, root: String? = nil) throws {
    if bytes.count > Self.maxFileSize {
      throw FolioError(
        .invalidConfig,
        "\(file) is larger than \(Self.maxFileSize >> 20) MiB; that is not a config file",
        location: .init(file: file, line: 1, column: 1))
    }
    let node = try YAMLParser(bytes: bytes, file: file).parseSingleDocument()
    do {
      self = try ConfigDecoder(file: file, root: root).decode(node)
    } catch let error as FolioError where error.location?.file == file {
      // The decoder sees nodes, not text; the excerpt comes from the bytes.
      throw error.withExcerpt(from: bytes)
    }
  }

  /// Reads at most one byte more than ``maxFileSize``: enough to tell that a
  /// file is too large without reading all of it.
  private static func readFile(_ path: String, displayName: String) throws -> [UInt8] {
    do {
      return try FileSystem.readPrefix(path, limit: maxFileSize + 1)
    } catch let error as FolioError {
      throw FolioError(
        .io, "cannot read the config file: \(error.message)", path: displayName, function: error.function)
    }
  }
}
