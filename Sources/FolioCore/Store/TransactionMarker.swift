import FolioSystem
import Glibc

/// The mark a transaction that writes many documents without the redo
/// journal leaves while it writes them: `.git/folio/transaction`.
///
/// An import lands hundreds of thousands of files by rename, and a sync
/// checkout writes every file a merge changed; neither goes through
/// ``Journal``, whose applied stamp is how live queries in other processes
/// see a transaction whole. So each writes this mark before its first
/// document and removes it after its last, under the store lock, and the
/// observation watcher holds back every change while the mark is there:
/// another process's import or checkout then reaches a live query as one
/// event, never as the states in between (issue 13).
///
/// The mark only says when to read. It is not flushed; a writer killed
/// midway leaves it behind, and a watcher that has waited a second takes
/// the store lock (so no writer is midway), finishes what the crash left
/// (``StoreRecovery/recover(keepingDeferred:)``) and removes the stale mark.
package enum TransactionMarker {
  /// The mark's file name in `.git/folio/`.
  package static let name = "transaction"

  static func path(privateDirectory: String) -> String { privateDirectory + "/" + name }

  /// Whether a bulk transaction is under way (or one died midway).
  package static func isPresent(privateDirectory: String) -> Bool {
    access(path(privateDirectory: privateDirectory), F_OK) == 0
  }

  /// Writes the mark: the writer's pid, for a person who finds it.
  static func place(privateDirectory: String) throws {
    let path = path(privateDirectory: privateDirectory)
    let fd = try FileSystem.syscall("open", path: path) {
      open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
    }
    defer { close(fd) }
    try FileSystem.writeAll(fd, Array("\(getpid())\n".utf8), path: path)
  }

  /// Removes the mark; a mark already gone is fine.
  package static func remove(privateDirectory: String) {
    unlink(path(privateDirectory: privateDirectory))
  }

  /// Runs `body`, which writes many documents outside the journal, with the
  /// marker in place. Call with the lock held.
  package static func around<T>(privateDirectory: String, _ body: () throws -> T) throws -> T {
    try place(privateDirectory: privateDirectory)
    defer { remove(privateDirectory: privateDirectory) }
    return try body()
  }
}
