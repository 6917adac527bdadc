import FolioCore
import FolioGit
import FolioJSON
import FolioQuery
import FolioSystem

extension RESTHandler {
  /// Folio's paths under `.info` for a data browser: how many documents a
  /// query matches, and a document's open conflicts.
  static let browsePrefixes = ["/.info/count/", "/.info/conflicts/"]

  /// `GET /.info/count/<table>.json?…` answers how many documents the
  /// query parameters match, limits aside, as a number; `GET
  /// /.info/conflicts/<table>/<pk>.json` the document's open conflicts (as
  /// `folio conflicts --json` lists them), and `POST` there with
  /// `{"path": "title", "resolution": "keep"}` (or `"takeOther"`, or
  /// `{"value": …}` for a value of one's own) settles the conflicts at
  /// that path as `folio conflicts resolve` does, answering what changed.
  func browse(_ request: HTTPRequest) throws -> HTTPReply {
    let store = self.store
    if request.rawPath.hasPrefix("/.info/count/") {
      guard request.method == "GET" || request.method == "HEAD" else {
        throw RESTError(405, "counts are read-only: use GET")
      }
      let path = try RESTPath(parsing: String(request.rawPath.dropFirst("/.info/count".count)))
      guard path.segments.count == 1, let table = path.table else {
        throw RESTError(400, "name one table, as in /.info/count/todos.json")
      }
      _ = try store.table(named: table)
      let query = try RESTQuery(request.query).query(on: store.collection(table), limited: false)
      return .json(200, .integer(try query.count()))
    }
    let (table, pk) = try infoDocument(request.rawPath, under: "/.info/conflicts")
    switch request.method {
    case "GET", "HEAD":
      let open = try store.conflicts(table: table).filter { $0.pk == pk }
      return .json(200, .array(open.map(\.json)))
    case "POST":
      let body: JSONValue
      do {
        body = try JSONValue(parsing: request.body, file: "request body")
      } catch let error as FolioError {
        throw RESTError(400, "Invalid data; couldn't parse JSON object. \(error)")
      }
      guard case .string(let field)? = body["path"], !field.isEmpty else {
        throw RESTError(400, #"name the conflict's path, as in {"path": "title", "resolution": "keep"}"#)
      }
      let resolution: Store.ConflictResolution
      switch (body["resolution"], body["value"]) {
      case (.string("keep")?, nil): resolution = .keep
      case (.string("takeOther")?, nil): resolution = .takeOther
      case (nil, let value?): resolution = .value(value)
      default:
        throw RESTError(
          400, #"give "resolution": "keep" or "takeOther", or a "value" of your own"#)
      }
      let results = try store.resolveConflict(table: table, pk: pk, path: FieldPath(field), resolution)
      return .json(200, .array(results.map(\.json)))
    default:
      throw RESTError(405, "conflicts take GET, to list, and POST, to resolve")
    }
  }
}
