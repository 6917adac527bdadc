import FolioJSON
import FolioSystem
import Glibc

extension StoreWriter {
  /// How many edits in a row one document write folds in before it gives
  /// up and leaves the file as the editor saved it.
  private static let foldLimit = 64

  /// Puts one document of a committing transaction in place without ever
  /// overwriting a save another program made after the transaction read the
  /// file.
  ///
  /// The new file is swapped in with `renameat2(RENAME_EXCHANGE)`, so what
  /// it replaced is caught at the old name, atomically; if that is not the
  /// content the transaction read, an editor saved in between: its change
  /// is diffed through the column kinds, applied on top, logged as an op of
  /// its own, and the result swapped in again. A new file goes in with
  /// `RENAME_NOREPLACE`, which fails if an editor created it meanwhile. On
  /// a file system without `renameat2` the check is a read right before a
  /// plain rename.
  /// - Returns: the ops of the edits folded in, in order.
  ///
  /// With `spares` (a deferred write), the new content goes into a spare
  /// file, if one is ready, which is swapped in from the spares' folder;
  /// the file it replaces, or the temp file's, is kept as a spare.
  func placeDocument(
    _ write: Journal.Write, in dirfd: Int32, name: String, sync: Bool, after last: HLC?,
    spares: SpareFiles? = nil
  ) throws -> [Op] {
    let placement = DocumentPlacement(
      store: store, write: write, dirfd: dirfd, name: name, sync: sync, last: last, spares: spares)
    // An edit saved before this point is folded in before anything moves.
    let current = try placement.read()
    if current.map({ FNV.hex($0) }) != placement.expected && !placement.foldIn(current) {
      return placement.folds
    }
    for _ in 0..<Self.foldLimit {
      if try placement.attempt() { break }
    }
    return placement.folds
  }

  /// Appends the ops of edits folded in while applying a journal (see
  /// ``Journal/Fold``), after the transaction's own, and moves the clock
  /// past them.
  func logFolds(_ folds: [Op], sync: Bool = true) throws {
    var bytes: [UInt8] = []
    for op in folds {
      bytes += op.json.compactBytes()
      bytes.append(UInt8(ascii: "\n"))
    }
    try OpLog.append(
      bytes, to: store.opLogPath, at: try OpLog.size(of: store.opLogPath), root: store.rootPath, sync: sync)
    if let last = folds.map(\.hlc).max() {
      store.clockState.withLock { state in
        if state.last.map({ $0 < last }) ?? true { state.last = last }
      }
    }
  }
}
