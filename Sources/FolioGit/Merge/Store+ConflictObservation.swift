import Dispatch
import FolioCore
import FolioQuery
import Foundation

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
    if let table { _ = try self.table(named: table) }
    let core = LiveQueryCore<[Conflict], ConflictListEvent>(
      deliverOn: queue, nextSignal: false,
      initialEvent: { ConflictListEvent(isInitial: true, opened: $0, closed: []) },
      changeEvent: { ConflictListEvent.change(from: $0, to: $1) },
      handler: { conflicts, event, _ in handler(conflicts, event) })
    // Watching before the first read, so no change in between is missed.
    // Each read and its hand-over happen under `serial`, so lists reach the
    // core in the order they were read, the initial one first. (A plain
    // lock: it orders work and guards no state.)
    let serial = NSLock()
    serial.lock()
    defer { serial.unlock() }
    let watcher = try ConflictWatcher(store: self) { [weak self] in
      serial.lock()
      defer { serial.unlock() }
      guard let self, let list = try? self.conflicts(table: table) else { return }
      core.update(list)
    }
    let observation = ConflictObservation(core: core, watcher: watcher)
    do {
      core.update(try conflicts(table: table))
    } catch {
      observation.stop()
      throw error
    }
    return observation
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
