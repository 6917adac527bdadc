import Folio
import FolioSystem
import Foundation

/// A fence for live queries: an observer of a marker document, started
/// after the live queries under test and delivering on their queue, and
/// changes to the marker made outside Folio.
///
/// Such a change reaches the store only through the observation watcher,
/// which reads its one inotify queue in order, and each refresh hands its
/// events to observers in the order they were added. So once the marker's
/// change has arrived, every event that an earlier change (a commit here,
/// another process's transaction, or any write the watcher heard of first)
/// would cause has been queued ahead of it, and, on a serial queue,
/// delivered.
public final class LiveQueryFence {
  private let path: String
  private let seen = Seen()
  private var live: LiveQuery?
  private var passes = 0

  /// The marker's values as its observer got them.
  private final class Seen: @unchecked Sendable {
    // @unchecked: `passes` is guarded by `condition`.
    private let condition = NSCondition()
    private var passes: [JSONValue?] = []

    func append(_ pass: JSONValue?) {
      condition.lock()
      passes.append(pass)
      condition.broadcast()
      condition.unlock()
    }

    /// Waits until `predicate` holds for the values, or `stateTimeout` passes.
    /// - Returns: whether it held.
    func wait(until predicate: ([JSONValue?]) -> Bool) -> Bool {
      let deadline = Date().addingTimeInterval(stateTimeout)
      condition.lock()
      defer { condition.unlock() }
      while !predicate(passes) {
        if !condition.wait(until: deadline) { return predicate(passes) }
      }
      return true
    }
  }

  /// - Parameters:
  ///   - table: a table the live queries under test do not follow.
  ///   - queue: the queue they deliver on.
  public init(store: Store, table: String = "notes", pk: String = "fence", queue: DispatchQueue = .main)
    throws
  {
    // Made through Folio, so that its folder is there before the watch.
    try store.apply(table: table, pk: pk, op: .upsert, columns: ["pass": 0])
    path = try store.documentPath(table: store.table(named: table), pk: pk)
    let seen = seen
    live = try store.collection(table).findByID(pk).observeLocal(deliverOn: queue) { document, _ in
      seen.append(document?["pass"])
    }
    _ = seen.wait { !$0.isEmpty }
  }

  /// Changes the marker outside Folio and waits until its observer has it.
  /// - Returns: whether it arrived in time.
  @discardableResult
  public func pass() throws -> Bool {
    passes += 1
    let pass = JSONValue.integer(passes)
    try FileSystem.writeAtomically(path, Array(#"{"pass":\#(passes)}"#.utf8), sync: false)
    return seen.wait { $0.last == pass }
  }

  /// Stops the marker's observer.
  public func stop() { live?.stop() }
}
