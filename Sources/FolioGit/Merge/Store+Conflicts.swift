import Dispatch
import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import Foundation

extension Store {
  /// How ``resolveConflict(table:pk:path:_:)`` settles a conflict.
  public enum ConflictResolution: Sendable, Hashable {
    /// Keep the value that won the merge.
    case keep
    /// Take the value the merge overwrote.
    case takeOther
    /// Set a new value (nil unsets the path).
    case value(JSONValue?)
  }

  /// The open conflicts: values that a concurrent assignment overwrote in a
  /// merge (see ``Conflict``) and that no op made since has settled. Each
  /// lists the winner in effect now. Every replica that holds the same
  /// commits lists the same conflicts.
  ///
  /// A record is open while every op on its document that is later than the
  /// lost value and touches its path is one of the concurrent winners the
  /// records name. Any other such op (a resolution, a later assignment,
  /// unset or remove, an import of the document) was made by a replica that
  /// had seen the lost value, so it settles the conflict.
  ///
  /// ```swift
  /// let open = try store.conflicts(table: "todos")
  /// ```
  /// - Parameter table: only this table's conflicts; nil for every table.
  /// - Returns: sorted by table, pk, path and the lost value's stamp.
  public func conflicts(table: String? = nil) throws -> [Conflict] {
    try ConflictRecords(store: self).conflicts(table: table)
  }

  /// Settles the open conflicts at `path` of a document with a normal
  /// update: it syncs like any op, and since it comes after the merge it
  /// closes the records on every replica that receives it.
  ///
  /// ```swift
  /// try store.resolveConflict(table: "todos", pk: "a", path: "title", .takeOther)
  /// ```
  /// - Returns: what the update changed.
  /// - Throws: `NOT_FOUND` when no conflict is open there; `CONFLICT` for
  ///   `.takeOther` when several different values were lost there (choose
  ///   one with `.value`).
  @discardableResult
  public func resolveConflict(table: String, pk: String, path: FieldPath, _ resolution: ConflictResolution)
    throws -> [UpdateResult]
  {
    try ConflictRecords(store: self).resolve(table: table, pk: pk, path: path, resolution)
  }
}

extension DocumentCollection {
  /// This table's open conflicts (``Store/conflicts(table:)``).
  ///
  /// ```swift
  /// for conflict in try store.collection("todos").conflicts() { print(conflict.path) }
  /// ```
  public func conflicts() throws -> [Conflict] {
    try store.conflicts(table: name)
  }
}

/// Live observation of the open conflicts.
///
/// Delivery rules:
/// - the first event is the initial one (`isInitial`), with the list as it
///   is now;
/// - after that, one event each time the list changes, whoever changed it:
///   a merge by `folio sync` or by `git pull` (its driver and hook), a
///   resolution or a later write in this process, in another process or on
///   another replica (arriving with a pull). Files written in a burst (one
///   merge, one checkout) make one event; changes that cancel out make
///   none;
/// - the handler runs on the main actor (a command-line program must run
///   the main queue), or on the queue given as `deliverOn:`, and never
///   concurrently with itself;
/// - after ``ConflictObservation/stop()`` returns, or the observation is
///   released, nothing more is delivered.
extension Store {
  /// Calls `handler` on the main actor with the open conflicts
  /// (``conflicts(table:)``) now, then each time they change, so that it
  /// can update a main-actor model directly.
  ///
  /// ```swift
  /// let watch = try store.observeConflicts { conflicts, event in
  ///     for conflict in event.opened { print("lost:", conflict.losingValue, "at", conflict.path) }
  /// }
  /// ```
  /// - Parameter table: only this table's conflicts; nil for every table.
  /// - Throws: `UNKNOWN_TABLE`; `IO` when the store's folders cannot be
  ///   watched; what ``conflicts(table:)`` throws for the initial list.
  public func observeConflicts(
    table: String? = nil, _ handler: @escaping @MainActor @Sendable ([Conflict], ConflictListEvent) -> Void
  ) throws -> ConflictObservation {
    try observeConflicts(table: table, deliverOn: .main) { conflicts, event in
      MainActor.assumeIsolated { handler(conflicts, event) }
    }
  }

  /// ``observeConflicts(table:_:)``, with the handler run on `queue`.
  ///
  /// ```swift
  /// let watch = try store.observeConflicts(deliverOn: queue) { conflicts, _ in
  ///     print(conflicts.count, "open conflicts")
  /// }
  /// ```
  public func observeConflicts(
    table: String? = nil, deliverOn queue: DispatchQueue,
    _ handler: @escaping @Sendable ([Conflict], ConflictListEvent) -> Void
  ) throws -> ConflictObservation {
    try ConflictRecords(store: self).observe(table: table, deliverOn: queue, handler)
  }

  /// The open conflicts now, then after each change, as an async
  /// sequence; ending the iteration stops the observation.
  ///
  /// ```swift
  /// for try await (conflicts, event) in try store.conflictChanges(table: "todos") {
  ///     if !event.isInitial { print(conflicts.count, "open") }
  /// }
  /// ```
  public func conflictChanges(table: String? = nil) throws -> LiveQueryChanges<
    ([Conflict], ConflictListEvent)
  > {
    if let table { _ = try self.table(named: table) }
    return LiveQueryChanges { yield in
      try self.observeConflicts(table: table, deliverOn: ObservationCenter.sequenceQueue) { yield(($0, $1)) }
    }
  }
}
