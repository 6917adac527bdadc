import FolioTestSupport
import Foundation

@testable import Folio
@testable import FolioCore
@testable import FolioJSON
@testable import FolioQuery
@testable import FolioSystem

/// Collects what a live query delivers, and lets a test wait for it.
final class EventRecorder<T: Sendable>: @unchecked Sendable {
  // @unchecked: all state is guarded by `condition`.
  private let condition = NSCondition()
  private var items: [T] = []

  func append(_ item: T) {
    condition.lock()
    items.append(item)
    condition.broadcast()
    condition.unlock()
  }

  var all: [T] {
    condition.lock()
    defer { condition.unlock() }
    return items
  }

  /// Waits until at least `count` items have arrived, or `timeout` passes.
  @discardableResult
  func wait(for count: Int, timeout: Double = stateTimeout) -> [T] {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while items.count < count {
      if !condition.wait(until: deadline) { break }
    }
    return items
  }

  /// Waits until `predicate` holds for the items, or `timeout` passes.
  @discardableResult
  func wait(timeout: Double = stateTimeout, until predicate: ([T]) -> Bool) -> [T] {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while !predicate(items) {
      if !condition.wait(until: deadline) { break }
    }
    return items
  }
}

/// A flag or counter shared with a handler.
final class Shared<T: Sendable>: @unchecked Sendable {
  // @unchecked: all state is guarded by `lock`.
  private let lock = NSLock()
  private var stored: T
  init(_ value: T) { stored = value }
  var value: T {
    lock.lock()
    defer { lock.unlock() }
    return stored
  }
  func update<R>(_ body: (inout T) -> R) -> R {
    lock.lock()
    defer { lock.unlock() }
    return body(&stored)
  }
}

/// A fence for live queries: an observer of a marker document, started
/// after the live queries under test and delivering on their queue, and
/// changes to the marker made outside Folio.
///
/// Such a change reaches the store only through the observation watcher,
/// which reads its one inotify queue in order, and each refresh hands its
/// events to observers in the order they were added. So once the marker's
/// change has arrived, every event that an earlier change (a commit here,
/// or any write the watcher heard of first) would cause has been queued
/// ahead of it, and, on a serial queue, delivered.
final class LiveQueryFence {
  private let store: Store
  private let path: String
  private let seen = EventRecorder<JSONValue?>()
  private var live: LiveQuery?
  private var passes = 0

  /// - Parameters:
  ///   - table: a table the live queries under test do not follow.
  ///   - queue: the queue they deliver on.
  init(store: Store, table: String = "notes", pk: String = "fence", queue: DispatchQueue = .main) throws {
    self.store = store
    // Made through Folio, so that its folder is there before the watch.
    try store.apply(table: table, pk: pk, op: .upsert, columns: ["pass": 0])
    path = try store.documentPath(table: store.table(named: table), pk: pk)
    let seen = seen
    live = try store.collection(table).findByID(pk).observeLocal(deliverOn: queue) { document, _ in
      seen.append(document?["pass"])
    }
    seen.wait(for: 1)
  }

  /// Changes the marker outside Folio and waits until its observer has it.
  /// - Returns: whether it arrived in time.
  @discardableResult
  func pass() throws -> Bool {
    passes += 1
    let pass = JSONValue.integer(passes)
    try FileSystem.writeAtomically(path, Array(#"{"pass":\#(passes)}"#.utf8), sync: false)
    return seen.wait { $0.last == pass }.last == pass
  }

  /// Stops the marker's observer.
  func stop() { live?.stop() }
}
