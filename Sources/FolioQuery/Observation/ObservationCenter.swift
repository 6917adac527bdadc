import Dispatch
import FolioCore
import FolioJSON
import FolioSystem
import Synchronization

/// The live queries of one store, and the one watcher that tells them when
/// documents change.
///
/// Changes arrive two ways. A commit in this process calls
/// ``didCommit(store:paths:)`` while it still holds the store lock, so
/// observers see exactly the state after each transaction. Every other
/// writer (the `folio` CLI in another process, merges from sync, `git pull`,
/// an editor) is seen by ``ObservationWatcher`` through inotify on the
/// table folders and the op logs; it waits while the journal shows a
/// transaction under way, so it sees a Folio transaction whole. Both paths name the changed
/// documents, and only the observers ``ObserverIndex`` says they can concern
/// (those holding one, and windows whose stretch holds its new position) do
/// any work.
package final class ObservationCenter: Sendable {
  private struct State {
    var next = 0
    var observers: [Int: any StoreObserver] = [:]
    var watcher: ObservationWatcher?
    /// Ids removed since the index last heard: removing takes no refresh
    /// lock (`stop()` may run anywhere), so the next refresh forgets them.
    var removed: [Int] = []
  }

  /// What the refresh lock guards.
  private struct Refreshing {
    /// The content hash (nil: no file) of each document as last refreshed.
    var seen: [ExactKey: String?] = [:]
    /// Which observers each change concerns.
    let index = ObserverIndex()

    /// Forgets the observers removed since.
    func prune(_ center: ObservationCenter) {
      for id in center.state.withLock({ s in
        defer { s.removed = [] }
        return s.removed
      }) {
        index.remove(id)
      }
    }
  }

  private let state = Mutex(State())
  /// Serializes refreshes, so each observer sees states in order.
  private let refreshLock = Mutex(Refreshing())
  /// Tests only: runs on the watcher thread between its journal check and
  /// its reads, the moment where another process's transaction can begin.
  let afterJournalCheck = Mutex<(@Sendable () -> Void)?>(nil)
  /// Tests only: runs on the watcher thread once a refresh has read the
  /// documents, before it checks what happened during the reads; so a test
  /// can finish a transaction it began at ``afterJournalCheck`` knowing
  /// that the reads saw it half done.
  let afterReads = Mutex<(@Sendable () -> Void)?>(nil)
  /// Where the async-sequence forms (`changes()`) take their events: they
  /// must not depend on anyone running the main queue.
  package static let sequenceQueue = DispatchQueue(label: "folio.observation.sequence")

  /// Registers `observer`, delivers its initial state, and starts the
  /// watcher if it is the first.
  /// - Returns: an id for ``remove(_:)``.
  func add(_ observer: any StoreObserver, store: Store) throws -> Int {
    let id = state.withLock { s in
      s.next += 1
      s.observers[s.next] = observer
      return s.next
    }
    do {
      // Watching before the first read, so no change in between is missed;
      // under the refresh lock, so the initial event comes first.
      try startWatcherIfNeeded(store: store)
      try refreshLock.withLock { refreshing in
        refreshing.prune(self)
        try observer.prepare(store: store, changed: nil, cache: DocumentCache())?()
        refreshing.index.set(id, table: observer.table, footprint: observer.footprint)
      }
    } catch {
      remove(id)
      throw error
    }
    return id
  }

  /// Unregisters an observer and stops it; stops the watcher with the last.
  func remove(_ id: Int) {
    let (observer, watcher) = state.withLock { s -> ((any StoreObserver)?, ObservationWatcher?) in
      let observer = s.observers.removeValue(forKey: id)
      if observer != nil { s.removed.append(id) }
      guard s.observers.isEmpty, let watcher = s.watcher else { return (observer, nil) }
      s.watcher = nil
      return (observer, watcher)
    }
    observer?.stop()
    watcher?.stop()
  }

  private func startWatcherIfNeeded(store: Store) throws {
    try state.withLock { s in
      guard s.watcher == nil, !s.observers.isEmpty else { return }
      s.watcher = try ObservationWatcher(store: store, center: self)
    }
  }

  var isEmpty: Bool { state.withLock { $0.observers.isEmpty } }

  /// The hook in `Store.commit`: `paths` are the document files a
  /// transaction wrote or removed. Called with the store lock held.
  func didCommit(store: Store, paths: [String]) {
    guard !isEmpty else { return }
    var changes: [String: Set<ExactKey>?] = [:]
    for path in paths {
      guard let (table, pk) = store.config.document(atPath: store.relative(path)) else { continue }
      changes[table.name, default: Set<ExactKey>()]?.insert(ExactKey(pk))
    }
    refresh(store: store, changes: changes)
  }

  /// Brings every observer of a changed table up to date. `changes` maps a
  /// table to its changed pks, or to nil when anything may have changed.
  ///
  /// Everything is read first and delivered after. `isConsistent` is asked
  /// in between, with the documents read (nil: a whole table): when it says
  /// no (a transaction wrote one of them meanwhile, so they may hold half
  /// of it), nothing is delivered and nothing is remembered, and the caller
  /// tries again once that transaction is done. One committed transaction
  /// thus never shows as two events.
  ///
  /// A document whose content is what the last refresh saw is dropped
  /// first: the watcher also hears of this process's own commits, after the
  /// commit hook has handled them, and re-running queries for them would
  /// double the cost. Content, not stat data, decides, because a file can
  /// be replaced twice within one timestamp tick by a file of the same size.
  /// - Returns: false when `isConsistent` said no.
  @discardableResult
  func refresh(
    store: Store, changes: [String: Set<ExactKey>?],
    isConsistent: (_ read: [String: Set<ExactKey>?]) -> Bool = { _ in true }
  ) -> Bool {
    if changes.isEmpty { return true }
    let observers = state.withLock { $0.observers }
    return refreshLock.withLock { refreshing in
      refreshing.prune(self)
      let cache = DocumentCache()
      var fresh: [String: Set<ExactKey>?] = [:]
      var hashes: [ExactKey: String?] = [:]
      for (table, pks) in changes {
        guard let pks else {
          fresh[table] = .some(nil)
          continue
        }
        guard let config = store.config.table(named: table) else { continue }
        var kept = Set<ExactKey>()
        for exact in pks {
          let pk = exact.string
          guard let path = try? store.documentPath(table: config, pk: pk) else { continue }
          // A document that does not parse right now (a hand edit in
          // progress) is skipped; the fix is a change too, and is seen.
          let read: (bytes: [UInt8], object: JSONObject)?
          do { read = try store.readDocument(at: path) } catch { continue }
          let key = ExactKey(table + "\u{0}" + pk)
          let hash = read.map { FNV.hex($0.bytes) }
          if let previous = refreshing.seen[key], previous == hash { continue }
          hashes[key] = .some(hash)
          cache.prime(
            table: table, pk: pk, document: read.map { Document(pk: pk, table: table, value: $0.object) })
          kept.insert(exact)
        }
        if !kept.isEmpty { fresh[table] = .some(kept) }
      }
      // Only the observers a change can concern (ObserverIndex), in id
      // order; a whole table asks all of its observers.
      var concerned: [(id: Int, observer: any StoreObserver, changed: Set<ExactKey>?)] = []
      for (table, changed) in fresh {
        if let changed, let changes = try? cache.changes(store: store, table: table, pks: changed) {
          for id in refreshing.index.candidates(table: table, changes: changes) {
            if let observer = observers[id] { concerned.append((id, observer, changed)) }
          }
        } else {
          for (id, observer) in observers where observer.table == table {
            concerned.append((id, observer, changed))
          }
        }
      }
      var deliveries: [(id: Int, observer: any StoreObserver, deliver: () -> Void)] = []
      for (id, observer, changed) in concerned {
        if let delivery = try? observer.prepare(store: store, changed: changed, cache: cache) {
          deliveries.append((id, observer, delivery))
        }
      }
      guard isConsistent(cache.read) else { return false }
      if refreshing.seen.count + hashes.count > 100_000 { refreshing.seen.removeAll() }
      refreshing.seen.merge(hashes) { _, new in new }
      for (id, observer, deliver) in deliveries {
        deliver()
        refreshing.index.set(id, table: observer.table, footprint: observer.footprint)
      }
      return true
    }
  }
}

/// One live query as the center sees it.
protocol StoreObserver: AnyObject, Sendable {
  /// The table it watches.
  var table: String { get }
  /// Reads what changed, and returns what hands the new state to its core,
  /// or nil when nothing it shows has changed. It changes nothing itself:
  /// the center may drop the result (``ObservationCenter/refresh``).
  /// `changed` nil means anything in the table may have changed.
  func prepare(store: Store, changed: Set<ExactKey>?, cache: DocumentCache) throws -> (() -> Void)?
  /// What changes can concern it, as its last delivered state says;
  /// asked under the refresh lock, after each delivery.
  var footprint: ObserverIndex.Footprint { get }
  /// Ends delivery.
  func stop()
}
