import Foundation
import Testing

/// Layers depend only downward: nothing in `Store/`, `Mutation/`, `JSON/`
/// or `Config/` names a type that `Git/`, `Merge/`, `Query/`,
/// `Observation/`, `Transfer/` or `Watch/` defines. Later layers reach the
/// store only through what it owns (`CommitObserver`, `RecoveryStep`,
/// `StoreAttachments`), wired in `StoreWiring+Layers.swift`.
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

  @Test func lowerLayersNameNoTypeOfALaterOne() throws {
    var later = Set<String>()
    for folder in ["Git", "Merge", "Query", "Observation", "Transfer", "Watch", "Serve"] {
      later.formUnion(try Self.declaredTypes(in: folder))
    }
    #expect(later.contains("GitRepository") && later.contains("ObservationCenter"), "the scan finds types")
    var found: [String] = []
    for folder in ["Store", "Mutation", "JSON", "Config"] {
      for file in try Self.swiftFiles(in: folder) {
        let lines = try String(contentsOf: file, encoding: .utf8).split(
          separator: "\n", omittingEmptySubsequences: false)
        for (number, line) in lines.enumerated() {
          let code = line.trimmingCharacters(in: .whitespaces)
          if code.hasPrefix("//") { continue }
          for word in code.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") })
          where later.contains(String(word)) {
            found.append("\(folder)/\(file.lastPathComponent):\(number + 1): \(word)")
          }
        }
      }
    }
    #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
  }
}
