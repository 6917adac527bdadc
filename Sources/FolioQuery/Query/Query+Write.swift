import FolioCore
import FolioJSON
import FolioSystem

/// Write with filters (the transform rules: transforms travel "on Update data and
/// Write with filters"): one mutation applied to every document a query
/// returns.
///
/// All of it is one transaction, with one op per document, so a merge
/// replays each like any other mutation, and either every document changes
/// or none does. Transforms are checked first: a malformed one throws
/// `LOCAL_CONSTRAINT` before any document is read or written.
///
/// The query runs first, outside the store lock; then, under the lock, each
/// document it returned is read again and changed only if it still matches
/// the query's filter. A document removed in between is left alone (an
/// update of a missing document changes nothing), and one inserted in
/// between is not included.
extension Query {
  /// Applies an update (or an upsert) to every document the query returns.
  ///
  /// ```swift
  /// let changed = try todos.query().where("done == false")
  ///     .update(columns: ["done": true], transforms: ["views": .increment(1)])
  /// print(changed.changedPKs)
  /// ```
  /// - Parameter dryRun: work everything out, write nothing.
  /// - Returns: the pks matched and what changed in each.
  /// - Throws: `LOCAL_CONSTRAINT` for a malformed transform or a change to
  ///   the key column, before anything is written.
  @discardableResult
  public func update(
    columns: [String: JSONValue] = [:], transforms: [String: JSONValue] = [:], dryRun: Bool = false
  ) throws -> FilteredWriteResult {
    try write(op: .update, columns: columns, transforms: transforms, dryRun: dryRun)
  }

  /// ``update(columns:transforms:dryRun:)`` with plain Swift values as
  /// columns.
  ///
  /// ```swift
  /// let owner = "ana"
  /// try todos.query().where("owner == null").update(columns: ["owner": owner])
  /// ```
  @discardableResult
  public func update(
    columns: [String: any JSONRepresentable], transforms: [String: JSONValue] = [:], dryRun: Bool = false
  ) throws -> FilteredWriteResult {
    try write(op: .update, columns: try columns.jsonValues(), transforms: transforms, dryRun: dryRun)
  }

  /// Removes every document the query returns; each removal is recorded and
  /// syncs as a delete.
  ///
  /// ```swift
  /// try todos.query().where("done == true").remove()
  /// ```
  @discardableResult
  public func remove(dryRun: Bool = false) throws -> FilteredWriteResult {
    try write(op: .remove, columns: [:], transforms: [:], dryRun: dryRun)
  }

  /// The one path behind the three calls above and
  /// ``Store/apply(table:where:op:columns:transforms:dryRun:)``.
  func write(
    op: Mutation.Kind, columns: [String: JSONValue], transforms: [String: JSONValue], dryRun: Bool
  ) throws -> FilteredWriteResult {
    try write(
      op: op, columns: JSONObject(columns.map { ($0.key, $0.value) }),
      transforms: JSONObject(transforms.map { ($0.key, $0.value) }), dryRun: dryRun)
  }

  /// ``write(op:columns:transforms:dryRun:)`` with JSON objects, whose keys
  /// are told apart by their bytes (twin keys stay two columns).
  func write(op: Mutation.Kind, columns: JSONObject, transforms: JSONObject, dryRun: Bool) throws
    -> FilteredWriteResult
  {
    let table = collection.name
    guard op != .insert else {
      throw FolioError(
        .localConstraint,
        "insert cannot take a filter: every document a filter matches exists; use update or upsert",
        table: table)
    }
    // seed 002: a malformed transform throws "before anything is written";
    // here, before any document is even read.
    for (column, value) in transforms.members.sorted(by: { $0.key.utf8Compare($1.key) < 0 }) {
      do {
        _ = try Transform(json: value, column: column)
      } catch var error as FolioError {
        error.table = table
        throw error
      }
    }
    let pks = try get().map(\.pk)
    var result = FilteredWriteResult(matchedPKs: [], results: [:])
    if pks.isEmpty { return result }
    do {
      try collection.store.write { tx in
        for pk in pks {
          // Changed since the query ran: only documents that still match.
          guard let current = try tx.get(table: table, pk: pk) else { continue }
          if let filter, !filter.matches(current.value) { continue }
          result.matchedPKs.append(pk)
          let changes = try tx.apply(table: table, pk: pk, op: op, columns: columns, transforms: transforms)
          if !changes.isEmpty { result.results[pk] = changes }
        }
        if dryRun { throw DryRun() }
      }
    } catch is DryRun {}
    return result
  }
}

/// Thrown out of a dry run's transaction so that nothing commits.
private struct DryRun: Error {}

/// What a write with filters did, per document.
///
/// ```swift
/// let outcome = try todos.query().where("done == true").remove()
/// for pk in outcome.changedPKs { print("removed", pk) }
/// ```
public struct FilteredWriteResult: Sendable, Hashable {
  /// The pks the filter matched, in the query's order.
  public var matchedPKs: [String]
  /// What changed, per pk; a matched document the mutation did not change
  /// (an update with nothing in it) has no entry. An assignment of the value
  /// a document already holds is recorded, as for one document.
  public var results: [String: [UpdateResult]]

  /// The pks that changed, in the query's order.
  public var changedPKs: [String] { matchedPKs.filter { results[$0] != nil } }

  /// Every change, in the query's order.
  public var allResults: [UpdateResult] { matchedPKs.flatMap { results[$0] ?? [] } }
}
