import FolioSystem
import Glibc

extension Store {
  /// Test only: the places a crash test can stop `sync` at, to `kill -9` it
  /// there for certain.
  package enum TestPausePoint: String {
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
    /// `FOLIO_TEST_PAUSE_AT`, read once: a checkout calls ``testPause(at:)``
    /// for every file it writes.
    private static let testPausePoint: String? = getenv("FOLIO_TEST_PAUSE_AT").map { String(cString: $0) }
  #endif

  /// The file a paused process writes (holding the point's name) once it
  /// has stopped.
  var testPauseMarkerPath: String { privateDirectory + "/test-paused" }

  /// Test only, and compiled only into debug builds (the tests'): when
  /// `FOLIO_TEST_PAUSE_AT` names `point`, writes ``testPauseMarkerPath`` and
  /// sleeps a minute, so a test can kill the process at exactly this point.
  /// A release build has no such stop.
  @inline(__always)
  package func testPause(at point: TestPausePoint) {
    #if DEBUG
      guard Store.testPausePoint == point.rawValue else { return }
      try? FileSystem.writeAtomically(testPauseMarkerPath, Array(point.rawValue.utf8), sync: false)
      sleep(60)
    #endif
  }
}
