import FolioJSON
import FolioSystem

extension WriteTransaction {
  /// ``apply(table:pk:op:columns:transforms:)`` with the columns and
  /// transforms as JSON objects, whose keys are told apart by their bytes.
  ///
  /// A `[String: JSONValue]` dictionary merges keys that Swift's `==` calls
  /// equal ("\u{E9}" and "e\u{301}"), so it cannot carry both twins; a
  /// `JSONObject` can (issue 13). The CLI's `--columns` and `--transforms`
  /// come this way.
  /// - Throws: as ``apply(table:pk:op:columns:transforms:)``.
  @discardableResult
  public func apply(
    table: String, pk: String, op: Mutation.Kind, columns: JSONObject, transforms: JSONObject = [:]
  ) throws -> [UpdateResult] {
    let config = try store.table(named: table)
    try PrimaryKey.validate(pk)
    // Code point order, as the dictionary form sorts, but by bytes.
    func sorted(_ object: JSONObject) -> [(key: String, value: JSONValue)] {
      object.members.sorted { $0.key.utf8Compare($1.key) < 0 }
    }
    // A malformed transform throws before anything is written, naming the
    // document it was for.
    let entries = try sorted(transforms).map { member in
      do {
        return Mutation.TransformEntry(
          path: .column(member.key), transform: try Transform(json: member.value, column: member.key))
      } catch var error as FolioError {
        (error.table, error.pk) = (table, pk)
        throw error
      }
    }
    let assignments = sorted(columns).map { Mutation.Assignment(path: .column($0.key), value: $0.value) }
    return try record(
      Mutation(kind: op, assignments: assignments, transforms: entries), table: config, pk: pk)
  }
}
