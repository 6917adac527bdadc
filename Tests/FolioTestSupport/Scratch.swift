import Folio
import FolioSystem
import Foundation

/// A scratch directory under the system temp folder, removed by `remove()`.
public struct Scratch: Sendable {
  public let path: String
  public var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

  public init() {
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
    notes: {}
  """

/// A new store in a new scratch directory.
public func makeStore(yaml: String = testYAML) throws -> (Store, Scratch) {
  let scratch = Scratch()
  try scratch.write("folio.yaml", yaml)
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
