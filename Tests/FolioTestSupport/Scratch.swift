import Folio
import FolioSystem
import Foundation

/// The library's settings in the test process, taken from its environment
/// as `folio` takes them (`FOLIO_TABLE_LAYOUT` for the suite's run over
/// nested tables), before the first scratch folder is made.
private let testSettings: Void = FolioSettings.use(
  FolioSettings(environment: ProcessInfo.processInfo.environment))

/// A scratch directory under the system temp folder, removed by `remove()`.
public struct Scratch: Sendable {
  public let path: String
  public var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

  public init() {
    _ = testSettings
    var template = Array((NSTemporaryDirectory() + "/folio-test-XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer in
      mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
    }
    guard let made else { preconditionFailure("mkdtemp failed") }
    path = FileSystem.realPath(made) ?? made
  }

  public func remove() { try? FileManager.default.removeItem(atPath: path) }

  public func write(_ relative: String, _ text: String) throws {
    let full = path + "/" + relative
    try FileManager.default.createDirectory(
      atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try text.write(toFile: full, atomically: false, encoding: .utf8)
  }

  public func read(_ relative: String) -> String? {
    try? String(contentsOfFile: path + "/" + relative, encoding: .utf8)
  }

  public func exists(_ relative: String) -> Bool {
    FileManager.default.fileExists(atPath: path + "/" + relative)
  }
}

/// The config most tests use.
public let testYAML = """
  version: 1
  tables:
    todos:
      path: data/todos
      key: id
      order: [lastUpdate]
      columns:
        views: counter
        tags: set
    notes:
      path: notes
  """

/// A new store in a new scratch directory.
public func makeStore(yaml: String = testYAML) throws -> (Store, Scratch) {
  let scratch = Scratch()
  try scratch.write("folio.yaml", withTestLayout(yaml))
  return (try Store.create(at: scratch.url), scratch)
}

/// A new store whose `notes` table holds `a` (`n: 1`) and `b` (`n: 2`).
public func makeStoreWithNotes() throws -> (Store, Scratch) {
  let (store, scratch) = try makeStore()
  try store.write { tx in
    _ = try tx.apply(table: "notes", pk: "a", op: .insert, columns: ["n": 1])
    _ = try tx.apply(table: "notes", pk: "b", op: .insert, columns: ["n": 2])
  }
  return (store, scratch)
}

/// `yaml` with `layout: L` added to every table that names its `path:`
/// and no layout, where the environment's `FOLIO_TABLE_LAYOUT` is `L`: so
/// the suite runs again over nested tables (`scripts/test.sh` does).
public func withTestLayout(_ yaml: String) -> String {
  guard let layout = ProcessInfo.processInfo.environment["FOLIO_TABLE_LAYOUT"], !yaml.contains("layout:")
  else { return yaml }
  var lines: [String] = []
  for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
    lines.append(String(line))
    let trimmed = line.drop { $0 == " " }
    if trimmed.hasPrefix("path:") {
      lines.append(String(repeating: " ", count: line.count - trimmed.count) + "layout: " + layout)
    }
  }
  return lines.joined(separator: "\n")
}

extension Store {
  /// The file of document `pk` of `table`, relative to the store root, in
  /// the table's layout: where a test saves as an editor would.
  public func file(_ table: String, _ pk: String) throws -> String {
    try self.table(named: table).path(of: pk)
  }
}

/// The file of document `pk` in a table the command line made in the
/// folder `path` (`folio tables add`, `import --create`, `init --table`),
/// relative to the store root: such a table has the layout of new tables.
public func newTableFile(_ path: String, _ pk: String) -> String {
  (try? TableConfig(name: "t", path: path, layout: .forNewTables).path(of: pk)) ?? path + "/" + pk + ".json"
}
