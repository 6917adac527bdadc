import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import FolioTransfer
import Foundation
import Glibc

extension RESTHandler {
  /// Folio's paths under `.info` for what the page shows as files and
  /// counts: a view exported whole, and a column's most common values.
  static let exportPrefixes = ["/.info/export/", "/.info/facets/"]

  /// The most values a facet request may ask for.
  static let maximumFacetLimit = 100

  /// `GET /.info/export/<table>.<csv|tsv|ndjson|json>?…` answers every
  /// document the query parameters match (limits included, if given), as
  /// `folio export` writes them, for download: the page's view as a file,
  /// and the same URL for curl with the token. Beyond the query parameters
  /// (``RESTQuery``): `select` picks the columns as `query --select` does,
  /// and `desc=true` reverses the order.
  ///
  /// `GET /.info/facets/<table>.json?path=P&where=…&limit=10` answers the
  /// most common values of path `P` (written as `--select` takes one) among
  /// the documents the filter matches (``Query/facets(of:limit:)``).
  func exportOrFacets(_ request: HTTPRequest) throws -> HTTPReply {
    guard request.method == "GET" || request.method == "HEAD" else {
      throw RESTError(405, "exports and facets are read-only: use GET")
    }
    let facets = request.rawPath.hasPrefix("/.info/facets/")
    let prefix = facets ? "/.info/facets/" : "/.info/export/"
    let name = RESTPath.percentDecode(String(request.rawPath.dropFirst(prefix.count))) ?? ""
    guard let dot = name.lastIndex(of: "."), !name[..<dot].isEmpty, !name.contains("/") else {
      throw RESTError(
        400,
        facets
          ? "name one table, as in /.info/facets/todos.json"
          : "name one table and a format, as in /.info/export/todos.csv")
    }
    let (table, suffix) = (String(name[..<dot]), String(name[name.index(after: dot)...]))
    _ = try store.table(named: table)
    if facets {
      guard suffix == "json" else { throw RESTError(400, "facets are JSON: /.info/facets/\(table).json") }
      return try facetCounts(table, request.query)
    }
    guard let format = TransferFormat(rawValue: suffix), format != .sqlite else {
      throw RESTError(400, "export as .csv, .tsv, .ndjson or .json, as in /.info/export/\(table).csv")
    }
    return try export(table, format: format, request.query)
  }

  private func export(_ table: String, format: TransferFormat, _ parameters: [String: String]) throws
    -> HTTPReply
  {
    let query = try RESTQuery(parameters).query(on: store.collection(table))
    var options = ExportOptions()
    options.format = format
    if let select = parameters["select"], !select.trimmingCharacters(in: .whitespaces).isEmpty {
      options.columnPaths = try FieldPath.list(parsing: select, source: "select")
    }
    switch parameters["desc"] {
    case nil, "false": break
    case "true": options.descending = true
    case let other?: throw RESTError(400, "desc must be true or false, not \"\(other)\"")
    }
    // Written whole to an unlinked file first, so that memory stays flat
    // however large the view, and a failure is an error status rather than
    // a cut-off download.
    var template = Array("\(FileManager.default.temporaryDirectory.path)/folio-export-XXXXXX".utf8CString)
    let fd = try FileSystem.syscall("mkstemp", path: "folio-export") {
      template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    }
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    options.outputDescriptor = fd
    let summary: ExportSummary
    var size = stat()
    do {
      summary = try store.exportRows(query, options: options)
      _ = try FileSystem.syscall("fstat", path: "folio-export") { fstat(fd, &size) }
    } catch {
      close(fd)
      throw error
    }
    let types: [TransferFormat: String] = [
      .csv: "text/csv; charset=utf-8", .tsv: "text/tab-separated-values; charset=utf-8",
      .ndjson: "application/x-ndjson", .json: "application/json; charset=utf-8",
    ]
    return .file(
      descriptor: fd, size: UInt64(size.st_size),
      headers: [
        ("Content-Type", types[format]!),
        ("Content-Disposition", "attachment; filename=\"\(Self.fileName(table)).\(format.rawValue)\""),
        ("X-Folio-Rows", String(summary.rows)), ("X-Folio-Skipped", String(summary.skipped.count)),
        ("Cache-Control", "no-store"),
      ])
  }

  private func facetCounts(_ table: String, _ parameters: [String: String]) throws -> HTTPReply {
    guard let text = parameters["path"], !text.trimmingCharacters(in: .whitespaces).isEmpty else {
      throw RESTError(400, "name the column to count, as in ?path=title (or meta.size)")
    }
    let paths = try FieldPath.list(parsing: text, source: "path")
    guard paths.count == 1, let path = paths.first else {
      throw RESTError(400, "facets count one column at a time (got \(paths.count))")
    }
    var limit = 10
    if let given = parameters["limit"] {
      guard let count = Int(given), (1...Self.maximumFacetLimit).contains(count) else {
        throw RESTError(
          400, "limit must be a whole number from 1 to \(Self.maximumFacetLimit) (got \(given))")
      }
      limit = count
    }
    let collection = store.collection(table)
    let query = try RESTQuery(parameters).query(on: collection, limited: false)
    let counts = try query.facets(of: path, limit: limit)
    // A misspelt column would count every document as null, in silence.
    if counts.nulls == counts.total, let unknown = try collection.unknownFields([path]).first {
      throw RESTError(400, "USAGE: \(unknown)")
    }
    return .json(
      200,
      .object([
        "path": .string(path.commandLineText), "total": .integer(counts.total),
        "distinct": .integer(counts.distinct), "nulls": .integer(counts.nulls),
        "fromIndex": .bool(counts.fromIndex),
        "values": .array(counts.values.map { .object(["value": $0.value, "count": .integer($0.count)]) }),
      ]))
  }

  /// A table name as a download's file name: quotes and controls, which
  /// would break the header, become `_`.
  private static func fileName(_ table: String) -> String {
    String(table.unicodeScalars.map { $0 == "\"" || $0 == "\\" || $0.value < 0x20 ? "_" : Character($0) })
  }
}
