import Folio
import FolioCore
import FolioTestSupport
import Foundation
import Synchronization
import Testing

/// An app holding `observeLocal` on a document sees the save a
/// person makes in an editor while `folio watch` runs in another process,
/// and the watcher records the save as an op.
@Suite struct WatchObserverTests {
  @Test func observerSeesAnEditorSaveWhileFolioWatchRuns() throws {
    let scratch = try WatchCLITests.store()
    defer { scratch.remove() }
    let store = try Store(at: URL(fileURLWithPath: scratch.path))
    let views = Mutex<[String]>([])
    let live = try store.collection("todos").findByID("a").observeLocal { document, _ in
      let text = document?.value["views"]?.compactString ?? "missing"
      views.withLock { $0.append(text) }
    }
    defer { live.stop() }
    let watch = try WatchProcess(in: scratch.path)
    // An editor's temp-then-rename save raises the counter from 1 to 5.
    Save.tempThenRename(
      scratch.path + "/data/todos/a.json", #"{"id": "a", "title": "x", "views": 5, "tags": ["p"]}"#)
    #expect(watch.waitFor(1, "op"))
    #expect(watch.stop() == 0)
    eventually { views.withLock { $0.last } == "5" }
    let seen = views.withLock { $0 }
    #expect(seen.first == "1", "the initial event comes first: \(seen)")
    #expect(seen.last == "5", "the observer must see the save: \(seen)")
    let log = try FolioRunner.run(["log", "todos", "a"], in: scratch.path).stdout
    #expect(log.contains(#""views":{"by":4,"op":"increment"}"#), "\(log)")
  }
}
