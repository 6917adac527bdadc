import Folio
import FolioCore
import FolioSystem
import FolioTestSupport
import Foundation
import Glibc
import Testing

@testable import FolioIndexDaemon

/// ``IndexDaemon`` in process: idle timeout, stop, one publisher per store,
/// and the status that `folio index-daemon --status` prints.
@Suite(.serialized)
struct IndexDaemonTests {
  static let yaml = "version: 1\ntables:\n  t:\n    path: t\n    order: [rank]\n"

  /// Runs `action` on another thread once the daemon's loop is running:
  /// the daemon answers questions only from its loop, so one answered
  /// means the loop has been entered. (The loop does not wait for `run()`,
  /// which only waits for it to end, and what ends it is watched before
  /// `runIndexDaemon` returns: this is the order a real daemon sees, not a
  /// condition for the outcome.)
  /// - Returns: whether the daemon answered, once `action` has run.
  static func onceRunning(_ store: Store, _ action: @escaping @Sendable () -> Void) -> () -> Bool {
    let answered = Shared<Bool?>(nil)
    Thread {
      let reply = eventually {
        guard let socket = IndexPublisherClient.connect(indexDirectory: store.privateDirectory + "/index")
        else { return false }
        defer { close(socket) }
        let question: JSONValue = ["check": "t", "signature": ""]
        return IndexPublisherClient.send(socket, question.compactBytes() + [UInt8(ascii: "\n")])
          && IndexPublisherClient.receiveLine(socket) != nil
      }
      action()
      answered.update { $0 = reply }
    }.start()
    return { eventually { answered.value != nil } && answered.value == true }
  }

  /// Whether `publisher.lock` is free. The daemon closes it before `run()`
  /// returns, but a child that another test's thread is spawning at that
  /// moment shares the lock's open file until its `exec` closes it
  /// (`O_CLOEXEC`), so the lock is let go once that child has started.
  static func released(_ store: Store) -> Bool {
    eventually { store.indexDaemonStatus() == .none }
  }

  @Test func exitsWhenIdleAndReportsItsStatus() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    #expect(store.indexDaemonStatus() == .none)
    // The idle clock starts when the daemon starts publishing, not at run().
    let started = ContinuousClock.now
    let daemon = try store.runIndexDaemon(idle: .milliseconds(300))
    #expect(store.indexDaemonStatus() == .daemon(pid: getpid()))
    #expect(store.indexDaemonStatus().description == "index daemon running (pid \(getpid()))")
    // One publisher per store.
    let second = #expect(throws: FolioError.self) { try Store(at: scratch.url).runIndexDaemon() }
    #expect(second?.code == .locked)
    #expect(second?.message.contains("an index daemon") == true)
    #expect(try daemon.run() == .idle)
    #expect(ContinuousClock.now - started >= .milliseconds(300))
    #expect(Self.released(store), "publisher.lock is still held")
  }

  @Test func stopsFromAnotherThreadAndNotAnotherPublisher() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    let daemon = try store.runIndexDaemon(idle: .seconds(60))
    let answered = Self.onceRunning(store) { daemon.stop() }
    #expect(try daemon.run() == .stopped)
    #expect(answered(), "the daemon's loop never answered")
    #expect(Self.released(store), "publisher.lock is still held")
    #expect(try store.stopIndexDaemon() == nil)

    // A publisher that is not a daemon (folio watch, an app) is not stopped.
    let publisher = try store.publishIndexes()
    defer { publisher.stop() }
    #expect(store.indexDaemonStatus() == .publisher(pid: getpid()))
    let refused = #expect(throws: FolioError.self) { try store.stopIndexDaemon() }
    #expect(refused?.message.contains("not an index daemon") == true)
  }

  /// `stopIndexDaemon()` sends the daemon SIGTERM, except to one in this
  /// very process, which it stops directly.
  @Test func stopIndexDaemonStopsOneInThisProcessWithoutASignal() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    let daemon = try store.runIndexDaemon(idle: .seconds(60))
    #expect(try store.stopIndexDaemon() == getpid())
    #expect(try daemon.run() == .stopped)
    #expect(Self.released(store), "publisher.lock is still held")
  }

  @Test func exitsWhenTheStoreGoes() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    let daemon = try store.runIndexDaemon(idle: .seconds(60))
    let answered = Self.onceRunning(store) {
      try? FileManager.default.removeItem(atPath: store.privateDirectory)
    }
    #expect(try daemon.run() == .storeGone)
    #expect(answered(), "the daemon's loop never answered")
  }

  @Test func exitsWhenTheConfigChanges() throws {
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    defer { scratch.remove() }
    let daemon = try store.runIndexDaemon(idle: .seconds(60))
    let answered = Self.onceRunning(store) {
      try? scratch.write("folio.yaml", withTestLayout(Self.yaml + "  u: {}\n"))
    }
    #expect(try daemon.run() == .configChanged)
    #expect(answered(), "the daemon's loop never answered")
  }
}
