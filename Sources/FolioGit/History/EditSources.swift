import FolioCore
import FolioJSON

/// Blames values no op explains on the commit that made them: from HEAD,
/// back through any parent that holds the same value, to the commit none
/// of whose parents does. A value the working tree holds and HEAD does not
/// has no commit yet.
final class EditSources {
  private let walk: PathHistory?
  private let reader: TreeMerge
  private let documentPath: String
  private let commitInfo: (Int) throws -> CommitInfo
  /// The document's versions read so far, by blob.
  private var documents: [GitOID: JSONObject] = [:]

  /// - Parameter walk: a walk whose path 0 is the document's.
  init(
    walk: PathHistory?, documentPath: String, reader: TreeMerge,
    commitInfo: @escaping (Int) throws -> CommitInfo
  ) {
    self.walk = walk
    self.documentPath = documentPath
    self.reader = reader
    self.commitInfo = commitInfo
  }

  /// The source of `value` at `tokens`.
  func source(_ tokens: [String], _ value: JSONValue) throws -> BlameSource {
    var made: Int?
    if let walk, let head = walk.steps.indices.last, try self.value(at: tokens, step: head) == value {
      var step = head
      while let parent = try walk.steps[step].parents.first(where: {
        try self.value(at: tokens, step: $0) == value
      }) {
        step = parent
      }
      made = step
    }
    return BlameSource(kind: .edit, stamp: nil, commit: try made.map(commitInfo))
  }

  private func value(at tokens: [String], step: Int) throws -> JSONValue? {
    guard let blob = try walk!.blob(step, 0) else { return nil }
    if documents[blob] == nil { documents[blob] = try reader.document(blob, path: documentPath) }
    return documents[blob]!.value(at: FieldPath(tokens))
  }
}
