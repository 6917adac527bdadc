import Folio
import FolioCore
import FolioSystem
import FolioTestSupport
import FolioWatch
import Foundation
import Synchronization

/// A ``Watcher`` running on its own thread, with every event it reports
/// collected for the test to wait on.
final class WatchHarness: Sendable {
  let watcher: Watcher
  let events = EventBox()
  private let finished = Mutex<Result<Void, FolioError>?>(nil)

  /// Starts watching `store` and waits until the watcher is ready.
  init(store: Store, debounce: Duration = .milliseconds(30), commitEvery: Duration? = nil) throws {
    let events = self.events
    watcher = try Watcher(
      store: store, options: Watcher.Options(debounce: debounce, commitEvery: commitEvery)
    ) { events.append($0) }
    let thread = Thread { [watcher, self] in
      do {
        try watcher.run()
        finished.withLock { $0 = .success(()) }
      } catch {
        finished.withLock { $0 = .failure(error as? FolioError ?? FolioError(.io, "\(error)")) }
      }
    }
    thread.start()
    let ready = wait { events in events.contains { if case .ready = $0 { true } else { false } } }
    if !ready {
      throw FolioError(
        .io, "the watcher did not become ready: \(String(describing: finished.withLock { $0 }))")
    }
  }

  /// Every event so far.
  var all: [WatchEvent] { events.snapshot }

  /// The ops recorded so far, with their files.
  var recorded: [(op: Op, file: String)] {
    all.compactMap { if case .recorded(let op, let file) = $0 { (op, file) } else { nil } }
  }

  /// The problems reported so far.
  var problems: [FolioError] {
    all.compactMap { if case .problem(let error) = $0 { error } else { nil } }
  }

  /// Waits (up to `timeout` seconds) until `predicate` holds for the events.
  @discardableResult
  func wait(timeout: Double = stateTimeout, _ predicate: ([WatchEvent]) -> Bool) -> Bool {
    eventually(timeout: timeout) { predicate(events.snapshot) }
  }

  /// Waits until `count` ops in total have been recorded.
  @discardableResult
  func waitForOps(_ count: Int, timeout: Double = stateTimeout) -> Bool {
    wait(timeout: timeout) { events in
      events.filter { if case .recorded = $0 { true } else { false } }.count >= count
    }
  }

  /// Waits until `count` problems in total have been reported.
  @discardableResult
  func waitForProblems(_ count: Int, timeout: Double = stateTimeout) -> Bool {
    wait(timeout: timeout) { events in
      events.filter { if case .problem = $0 { true } else { false } }.count >= count
    }
  }

  /// The ops recorded so far, less those of ``fence(in:)``'s markers.
  var recordedWithoutFences: [(op: Op, file: String)] {
    recorded.filter { !$0.op.pk.hasPrefix(Self.fencePrefix) }
  }

  private static let fencePrefix = "fence-"
  private let fences = Mutex(0)

  /// Saves a new marker document in `table` of `store` (making its folder
  /// first, as an editor user would, where the table's layout puts it in
  /// a subfolder not made yet) and waits until its op is recorded. Every
  /// event of an earlier change sits ahead of the marker's in the
  /// watcher's one inotify queue and starts its quiet period no later, so
  /// once the marker is recorded, whatever those events would record or
  /// report has been too, except what waits for a writer to close its
  /// file; ``stop()`` records that.
  /// - Returns: whether the marker was recorded in time.
  @discardableResult
  func fence(in store: Store, table: String) throws -> Bool {
    let number = fences.withLock {
      $0 += 1
      return $0
    }
    let pk = Self.fencePrefix + "\(number)"
    try FileSystem.writeAtomically(
      try store.editorPath(table, pk), Array(#"{"fence": true}"#.utf8), sync: false)
    return wait { events in
      events.contains { if case .recorded(let op, _) = $0 { op.pk == pk } else { false } }
    }
  }

  /// Stops the watcher and waits for `run()` to return.
  func stop() throws {
    watcher.stop()
    guard eventually(timeout: stateTimeout, { finished.withLock { $0 } != nil }) else {
      throw FolioError(.io, "the watcher did not return within \(Int(stateTimeout)) s of stop()")
    }
    if case .failure(let error)? = finished.withLock({ $0 }) { throw error }
  }
}

/// The events a watcher reported, guarded by a mutex.
final class EventBox: Sendable {
  private let events = Mutex<[WatchEvent]>([])
  func append(_ event: WatchEvent) { events.withLock { $0.append(event) } }
  var snapshot: [WatchEvent] { events.withLock { $0 } }
}

extension Store {
  /// The absolute path of document `pk`'s file in `table`, in the table's
  /// layout, with its folder made where missing: as an editor user would
  /// `mkdir -p` before saving a new document in a hashed table.
  func editorPath(_ table: String, _ pk: String) throws -> String {
    let path = rootPath + "/" + (try file(table, pk))
    try FileSystem.makeDirectories(FileSystem.split(path).directory)
    return path
  }
}
