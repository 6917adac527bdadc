import Foundation
import Testing

/// Layers depend only downward: nothing in `Store/`, `Mutation/`, `JSON/`,
/// `Schema/` or `Config/` names a type that `Git/`, `Merge/`, `Query/`,
/// `Observation/`, `Transfer/`, `Watch/`, `IndexDaemon/` or `Serve/`
/// defines; the first layers keep their order (`JSON/`, `Schema/`,
/// `Config/`, then the store); and `Query/` names none of `IndexDaemon/`.
/// Later layers reach the store only through what it owns
/// (`CommitObserver`, `RecoveryStep`, `StoreAttachments`, `StoreCheck`), and
/// queries the daemon only through `IndexPublisherLink`, all wired in
/// `StoreWiring+Layers.swift`.
struct LayeringTests {
  static let sources = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Sources/Folio")

  static func swiftFiles(in folder: String) throws -> [URL] {
    let url = sources.appendingPathComponent(folder)
    return try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
      .filter { $0.pathExtension == "swift" }
  }

  /// The names of the top-level types a folder declares (nested ones, such
  /// as a `Kind` or an `Entry`, are reached through their outer type).
  static func declaredTypes(in folder: String) throws -> Set<String> {
    let declaration =
      #/^(?:(?:public|internal|final|private|fileprivate|indirect)\s+)*(?:class|struct|enum|protocol|actor)\s+([A-Z][A-Za-z0-9]*)/#
    var names = Set<String>()
    for file in try swiftFiles(in: folder) {
      for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
        if let match = line.firstMatch(of: declaration) { names.insert(String(match.output.1)) }
      }
    }
    return names
  }

  /// Where the files in `folders` name one of `types` outside comments,
  /// as `Folder/File.swift:LINE: Name`.
  static func uses(of types: Set<String>, in folders: [String]) throws -> [String] {
    var found: [String] = []
    for folder in folders {
      for file in try swiftFiles(in: folder) {
        let lines = try String(contentsOf: file, encoding: .utf8).split(
          separator: "\n", omittingEmptySubsequences: false)
        for (number, line) in lines.enumerated() {
          let code = line.trimmingCharacters(in: .whitespaces)
          if code.hasPrefix("//") { continue }
          for word in code.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") })
          where types.contains(String(word)) {
            found.append("\(folder)/\(file.lastPathComponent):\(number + 1): \(word)")
          }
        }
      }
    }
    return found
  }

  @Test func lowerLayersNameNoTypeOfALaterOne() throws {
    var later = Set<String>()
    for folder in ["Git", "Merge", "Query", "Observation", "Transfer", "Watch", "IndexDaemon", "Serve"] {
      later.formUnion(try Self.declaredTypes(in: folder))
    }
    #expect(later.contains("GitRepository") && later.contains("ObservationCenter"), "the scan finds types")
    let found = try Self.uses(of: later, in: ["Store", "Mutation", "JSON", "Schema", "Config"])
    #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
  }

  /// JSON comes first, then the schema validator, then the config that
  /// reads schemas, then the store that enforces them.
  @Test func theFirstLayersKeepTheirOrder() throws {
    let store = try Self.declaredTypes(in: "Store").union(try Self.declaredTypes(in: "Mutation"))
    let config = try Self.declaredTypes(in: "Config")
    let schema = try Self.declaredTypes(in: "Schema")
    #expect(schema.contains("JSONSchema") && config.contains("TableConfig"), "the scan finds types")
    var found = try Self.uses(of: store.union(config), in: ["Schema"])
    found += try Self.uses(of: store.union(config).union(schema), in: ["JSON"])
    #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
  }

  /// Queries reach the index daemon only through the hook Query owns
  /// (`IndexPublisherLink`), registered by the composition root.
  @Test func queryNamesNoTypeOfTheIndexDaemon() throws {
    let daemon = try Self.declaredTypes(in: "IndexDaemon")
    #expect(
      daemon.isSuperset(of: ["IndexPublisher", "IndexPublisherClient", "IndexDaemonLink"]), "\(daemon)")
    let found = try Self.uses(of: daemon, in: ["Query"])
    #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
  }
}
