import FolioSystem
import Glibc

/// Test only: stops a process at a named point of a write, so that a crash
/// test can `kill -9` it there for certain. Compiled into debug builds only.
package enum TestPause {
  /// The places a crash test can stop a write at.
  package enum Point: String {
    /// The merge commit and its objects are written; no ref has moved.
    case merge
    /// The checkout journal is written and the first half of the changed
    /// files landed; the rest, the index and the ref are not written yet.
    case checkout
    /// A transaction's journal is written and its first document replaced;
    /// the others, the applied stamp and the journal's clearing are not done.
    case commit
  }

  #if DEBUG
    /// `FOLIO_TEST_PAUSE_AT`, read once: a checkout calls ``at(_:in:)``
    /// for every file it writes.
    private static let pausePoint: String? = getenv("FOLIO_TEST_PAUSE_AT").map { String(cString: $0) }
  #endif

  /// The file a paused process writes (holding the point's name) once it
  /// has stopped.
  static func markerPath(in store: Store) -> String { store.privateDirectory + "/test-paused" }

  /// Test only, and compiled only into debug builds (the tests'): when
  /// `FOLIO_TEST_PAUSE_AT` names `point`, writes ``markerPath(in:)`` and
  /// sleeps a minute, so a test can kill the process at exactly this point.
  /// A release build has no such stop.
  @inline(__always)
  package static func at(_ point: Point, in store: Store) {
    #if DEBUG
      guard pausePoint == point.rawValue else { return }
      try? FileSystem.writeAtomically(markerPath(in: store), Array(point.rawValue.utf8), sync: false)
      sleep(60)
    #endif
  }
}
