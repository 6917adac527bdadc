import Folio
import FolioSystem
import FolioTestSupport
import FolioTransfer
import Foundation
import Glibc
import Testing

@testable import FolioCore

/// An import reads, checks and stages its rows without the store lock, so
/// other writers go on meanwhile; it takes the lock only to land. A write
/// to a document the import read while it was staging is not lost: the
/// import stages again, under the lock, from the same input.
@Suite struct ImportConcurrencyTests {
  /// How the rows reach the import: a regular file, or a named pipe that
  /// can be read only once.
  enum Input: String, CaseIterable, CustomTestStringConvertible {
    case file, pipe
    var testDescription: String { rawValue }
  }

  /// Rows `r0…r(n-1)`; `first` comes before them when given.
  static func rows(_ n: Int, first: String? = nil) -> String {
    var text = first.map { $0 + "\n" } ?? ""
    for k in 0..<n { text += #"{"id":"r\#(k)","n":\#(k)}"# + "\n" }
    return text
  }

  /// Options for importing `text` as `input`; a pipe is fed by a thread.
  static func options(_ text: String, as input: Input, in scratch: Scratch) throws -> ImportOptions {
    let path = scratch.path + "/rows.ndjson"
    switch input {
    case .file:
      try scratch.write("rows.ndjson", text)
    case .pipe:
      #expect(mkfifo(path, 0o600) == 0)
      let bytes = Array(text.utf8)
      Thread.detachNewThread {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = try? FileSystem.writeAll(fd, bytes, path: path)
        close(fd)
      }
    }
    var options = ImportOptions(path: path)
    options.format = .ndjson
    return options
  }

  /// The op log's stamps, in file order.
  static func stamps(_ store: Store) throws -> [HLC] {
    try OpLog.entries(in: store.opLogPath, displayName: "log").map(\.op.hlc)
  }

  @Test(arguments: Input.allCases)
  func aWriterGoesOnWhileAnImportStages(_ input: Input) throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    // No wait at all: the lock must be free while the import stages.
    let other = try Store(rootPath: scratch.path, wiring: .layers, lockTimeout: 0)
    var wrote = false
    let summary = try store.importRows(
      into: "notes", options: try Self.options(Self.rows(2_000), as: input, in: scratch),
      onProgress: { progress in
        guard progress.phase == .reading, !wrote else { return }
        wrote = true
        _ = try? other.write { tx in
          _ = try tx.apply(table: "notes", pk: "elsewhere", op: .insert, columns: ["n": 7])
        }
      })
    #expect(wrote)
    #expect(summary.created == 2_000)
    #expect(try store.collection("notes").findByID("elsewhere").exec()?.value["n"] == 7)
    #expect(try store.collection("notes").count() == 2_003)
    // The import's op lines were stamped after the write that landed first.
    let stamps = try Self.stamps(store)
    #expect(stamps.count == 2 + 1 + 2_000)
    #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 }, "op log out of clock order")
  }

  @Test(arguments: Input.allCases)
  func aDocumentWrittenWhileStagingIsNotLost(_ input: Input) throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    let other = try Store(rootPath: scratch.path, wiring: .layers, lockTimeout: 0)
    var options = try Self.options(Self.rows(2_000, first: #"{"id":"a","x":1}"#), as: input, in: scratch)
    options.mode = .upsert
    var wrote = false
    let summary = try store.importRows(
      into: "notes", options: options,
      onProgress: { progress in
        guard progress.phase == .reading, !wrote else { return }
        wrote = true
        // `a` was read (it is the first row) and is now replaced.
        _ = try? other.write { tx in
          _ = try tx.put(table: "notes", pk: "a", document: ["id": "a", "y": 2])
        }
      })
    #expect(wrote)
    #expect(summary.created == 2_000)
    #expect(summary.updated == 1)
    // Both writes count: the import's `x` on top of the other writer's `a`.
    #expect(try store.collection("notes").findByID("a").exec()?.value == ["id": "a", "x": 1, "y": 2])
    #expect(try store.collection("notes").count() == 2_002)
    let stamps = try Self.stamps(store)
    #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 }, "op log out of clock order")
    #expect(try store.check().isEmpty)
  }

  /// A bad row is reported once, even when the import stages twice.
  @Test func aBadRowIsReportedOnceWhenTheImportStagesAgain() throws {
    let (store, scratch) = try makeStoreWithNotes()
    defer { scratch.remove() }
    let other = try Store(rootPath: scratch.path, wiring: .layers, lockTimeout: 0)
    var options = try Self.options(
      Self.rows(1_000, first: #"{"id":"a","x":1}"# + "\n" + "[1]"), as: .pipe, in: scratch)
    options.mode = .upsert
    options.continueOnError = true
    var wrote = false
    var bad: [FolioError] = []
    let summary = try store.importRows(
      into: "notes", options: options, onBadRow: { bad.append($0) },
      onProgress: { progress in
        guard progress.phase == .reading, !wrote else { return }
        wrote = true
        _ = try? other.write { tx in _ = try tx.put(table: "notes", pk: "a", document: ["id": "a", "y": 2]) }
      })
    #expect(bad.count == 1)
    #expect(bad.first?.location?.line == 2)
    #expect(summary.skipped == 1)
    #expect(try store.collection("notes").findByID("a").exec()?.value == ["id": "a", "x": 1, "y": 2])
  }
}
