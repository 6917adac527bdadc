import FolioCore
import FolioGit
import FolioJSON

extension RESTHandler {
  /// The Folio paths under Firebase's reserved `.info` space that serve a
  /// document's history: `/.info/history/<table>/<pk>.json` and
  /// `/.info/blame/<table>/<pk>.json`.
  static let historyPrefixes = ["/.info/history/", "/.info/blame/"]

  /// The reply to `GET /.info/history/<table>/<pk>.json` (the versions,
  /// newest first, each with its value and its changes, as `folio history
  /// --format ndjson --diff` gives them plus `value`) or
  /// `/.info/blame/<table>/<pk>.json` (one object per leaf, as `folio blame
  /// --format ndjson`). Both are arrays; an unknown document gives 404.
  func history(_ rawPath: String, method: String) throws -> HTTPReply {
    guard method == "GET" || method == "HEAD" else {
      throw RESTError(405, "history and blame are read-only: use GET")
    }
    let blame = rawPath.hasPrefix("/.info/blame/")
    let (table, pk) = try infoDocument(rawPath, under: blame ? "/.info/blame" : "/.info/history")
    let store = self.store
    var items: [JSONValue] = []
    if blame {
      let found = try store.blame(table: table, pk: pk)
      items = found.fields.map { $0.json(table: table, pk: pk) }
    } else {
      for version in try store.history(table: table, pk: pk) {
        guard case .object(var object) = version.json(diff: true) else { continue }
        object["value"] = version.document.map { .object($0.value) } ?? .null
        items.append(.object(object))
      }
    }
    if items.isEmpty { throw RESTError(404, "no document '\(pk)' in table '\(table)'") }
    return .json(200, .array(items))
  }

  /// The table and pk `rawPath` names below `prefix`, as in
  /// `/.info/blame/todos/k1.json`: 400 when it names anything but one
  /// document, 404 for a table `folio.yaml` does not define.
  func infoDocument(_ rawPath: String, under prefix: String) throws -> (table: String, pk: String) {
    let path = try RESTPath(parsing: String(rawPath.dropFirst(prefix.count)))
    guard path.segments.count == 2, let table = path.table, let pk = path.pk else {
      throw RESTError(400, "name one document, as in \(prefix)/todos/k1.json")
    }
    try PrimaryKey.validate(pk)
    guard store.config.table(named: table) != nil else {
      throw RESTError(404, "no table '\(table)' in folio.yaml")
    }
    return (table, pk)
  }
}
