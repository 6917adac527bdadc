import Folio
import FolioTestSupport
import Foundation
import Testing

/// Google's firebase-admin Python SDK (from PyPI, in the virtual
/// environment `scripts/install-deps.sh` makes) against the built `folio
/// serve`, in the SDK's emulator-host mode, as a Firebase program would
/// use it: each call and its answer as Firebase documents them.
struct FirebaseSDKTests {
  /// Tables that keep the pk in the file name, as Firebase keeps a key in
  /// the path; `counters` is a table with a key column, for the one check
  /// that shows the difference.
  static let yaml = """
    version: 1
    tables:
      users:
        path: data/users
        key: null
        order: [age]
      rooms:
        path: data/rooms
        key: null
      keyed:
        path: data/keyed
    """

  static var sdkAvailable: Bool {
    FileManager.default.isExecutableFile(atPath: ServePageBrowserTests.python)
      && (try? FolioRunner.shellOutput(
        "\(ServePageBrowserTests.python) -c 'import firebase_admin'", in: "/"
      ).status) == 0
  }

  /// What every SDK script starts with: the SDK in emulator mode against
  /// the port in `sys.argv[1]`, and `step` and `equal`. Each step prints `ok
  /// NAME` once its answer is what Firebase documents; the first that is
  /// not prints `FAIL NAME: why` and exits 1.
  static let prelude = #"""
    import os, queue, sys, threading
    port = sys.argv[1]
    os.environ["FIREBASE_DATABASE_EMULATOR_HOST"] = "127.0.0.1:" + port
    import firebase_admin
    from firebase_admin import db, exceptions

    # The SDK's stream thread reads from the response that close() shuts;
    # what it then raises is the SDK tidying up, not an answer.
    threading.excepthook = lambda args: None
    firebase_admin.initialize_app(options={"databaseURL": "https://folio-test.firebaseio.com"})
    WAIT = 60

    def step(name, check):
        try:
            check()
        except Exception as error:
            print("FAIL %s: %s: %s" % (name, type(error).__name__, error), flush=True)
            sys.exit(1)
        print("ok", name, flush=True)

    def equal(got, want):
        assert got == want, "got %r, want %r" % (got, want)

    """#

  /// The steps, after ``prelude``; `sys.argv[2]` is the store's folder.
  static let script =
    prelude + #"""
      store = sys.argv[2]
      users = db.reference("/users")
      ann = users.child("ann")

      def set_and_get():
          written = {"name": "Ann", "age": 30, "id": 7, "tags": ["a", "b"], "home": {"city": "Oslo"}}
          equal(ann.set(written), None)
          equal(ann.get(), written)
          equal(ann.child("home/city").get(), "Oslo")
          equal(ann.child("tags").get(), ["a", "b"])
          equal(users.child("nobody").get(), None)
      step("set and get read back exactly what was written", set_and_get)

      def file_on_disk():
          text = open(os.path.join(store, "data/users/ann.json")).read()
          assert '"id": 7' in text and "ann" not in text, text
      step("the stored document holds no pk", file_on_disk)

      def update():
          ann.update({"age": 31, "home/zip": "0150", "id": None})
          equal(ann.get(), {"name": "Ann", "age": 31, "tags": ["a", "b"], "home": {"city": "Oslo", "zip": "0150"}})
          users.update({"bob/name": "Bob", "bob/age": 20, "cy": {"name": "Cy", "age": 40}})
          equal(users.child("bob").get(), {"name": "Bob", "age": 20})
          equal(users.child("cy").get(), {"name": "Cy", "age": 40})
      step("update writes each path, and null removes", update)

      def nulls():
          rooms = db.reference("/rooms")
          rooms.child("r1").set({"a": 1, "b": None, "c": {"d": None}})
          equal(rooms.child("r1").get(), {"a": 1})
          rooms.child("r1/a").delete()
          equal(rooms.child("r1").get(), None)
          rooms.child("r2").set({"a": 1})
          rooms.child("r2").set({})
          equal(rooms.child("r2").get(), None)
      step("null means absent, and an emptied document is gone", nulls)

      def push():
          first = users.push({"name": "Dee", "age": 25})
          second = users.push({"name": "Eve", "age": 35})
          assert first.key < second.key, (first.key, second.key)
          equal(first.get(), {"name": "Dee", "age": 25})
          # push() without a value hands out a key for a later set.
          later = users.push()
          later.set({"name": "Fay", "age": 50})
          equal(later.get(), {"name": "Fay", "age": 50})
          later.delete()
          first.delete()
          second.delete()
      step("push makes time-ordered keys", push)

      def delete():
          users.child("cy").delete()
          equal(users.child("cy").get(), None)
          equal(sorted(users.get(shallow=True)), ["ann", "bob"])
      step("delete, and a shallow read", delete)

      def etags():
          value, etag = ann.get(etag=True)
          equal(ann.get_if_changed(etag), (False, None, None))
          ok, now, new_etag = ann.set_if_unchanged(etag, dict(value, age=32))
          assert ok and now["age"] == 32 and new_etag != etag, (ok, now, new_etag)
          ok, current, current_etag = ann.set_if_unchanged(etag, dict(value, age=99))
          assert not ok and current["age"] == 32 and current_etag == new_etag, (ok, current)
          changed, fresh, fresh_etag = ann.get_if_changed(etag)
          assert changed and fresh["age"] == 32 and fresh_etag == new_etag, (changed, fresh)
      step("conditional get and set by ETag", etags)

      def transactions():
          counter = db.reference("/rooms/tally")
          equal(counter.transaction(lambda current: {"n": 0} if current is None else current), {"n": 0})
          def add_one(current):
              return {"n": current["n"] + 1}
          threads = [threading.Thread(target=lambda: [counter.transaction(add_one) for _ in range(5)])
                     for _ in range(4)]
          for thread in threads: thread.start()
          for thread in threads: thread.join()
          equal(counter.get(), {"n": 20})
      step("transactions under contention add up", transactions)

      def queries():
          for key, age in [("dee", 25), ("eve", 35), ("fay", 25)]:
              users.child(key).set({"name": key, "age": age, "pet": {"legs": age // 5}})
          # The SDK's query setters change the query they are called on.
          by_age = lambda: users.order_by_child("age")
          equal(list(by_age().get()), ["bob", "dee", "fay", "ann", "eve"])
          equal(list(by_age().limit_to_first(2).get()), ["bob", "dee"])
          equal(list(by_age().limit_to_last(2).get()), ["ann", "eve"])
          equal(list(by_age().start_at(25).end_at(32).get()), ["dee", "fay", "ann"])
          equal(list(by_age().equal_to(25).get()), ["dee", "fay"])
          equal(list(users.order_by_child("pet/legs").start_at(6).get()), ["eve"])
          equal(list(users.order_by_key().start_at("c").limit_to_first(2).get()), ["dee", "eve"])
          scores = db.reference("/rooms/scores")
          scores.set({"x": 3, "y": 1, "z": 2})
          equal(list(scores.order_by_value().get().items()), [("y", 1), ("z", 2), ("x", 3)])
          equal(list(scores.order_by_value().limit_to_last(1).get()), ["x"])
          equal(list(scores.order_by_key().end_at("y").get()), ["x", "y"])
      step("ordered queries at a table and inside a document", queries)

      def refused():
          for bad in [{"a.b": 1}, {"a": {"$x": 1}}, {"a/b": 1}]:
              try:
                  db.reference("/rooms/bad").set(bad)
              except exceptions.InvalidArgumentError:
                  continue
              raise AssertionError("accepted %r" % bad)
          equal(db.reference("/rooms/bad").get(), None)
      step("keys Firebase refuses are refused", refused)

      def increments():
          room = db.reference("/rooms/inc")
          room.set({"n": 1, "s": "text"})
          room.update({"n": {".sv": {"increment": 2.5}}, "s": {".sv": {"increment": 1}},
                       "m": {".sv": {"increment": 4}}})
          equal(room.get(), {"n": 3.5, "s": 1, "m": 4})
      step("server increments", increments)

      def listen():
          events = queue.Queue()
          cache = {}
          def apply(event):
              # The client cache Firebase's REST streaming describes.
              node, parts = cache, [p for p in event.path.split("/") if p]
              if event.event_type == "put" and not parts:
                  cache.clear()
                  cache.update(event.data or {})
              elif event.event_type == "put":
                  for part in parts[:-1]: node = node.setdefault(part, {})
                  if event.data is None: node.pop(parts[-1], None)
                  else: node[parts[-1]] = event.data
              else:
                  for part in parts: node = node.setdefault(part, {})
                  for key, value in event.data.items():
                      if value is None: node.pop(key, None)
                      else: node[key] = value
              events.put(event)
          rooms = db.reference("/rooms")
          registration = rooms.listen(apply)
          first = events.get(timeout=WAIT)
          equal((first.event_type, first.path), ("put", "/"))
          def until(condition, what):
              while not condition():
                  try: events.get(timeout=WAIT)
                  except queue.Empty: raise AssertionError("no event for " + what + "; cache " + repr(cache))
          rooms.child("live").set({"v": 1})
          until(lambda: cache.get("live") == {"v": 1}, "set")
          rooms.child("live").update({"w": 2})
          until(lambda: cache.get("live") == {"v": 1, "w": 2}, "update")
          rooms.child("live").delete()
          until(lambda: "live" not in cache, "delete")
          # close() joins a thread that is blocked reading until the server's
          # next keep-alive: let it finish on its own.
          threading.Thread(target=registration.close, daemon=True).start()
          equal(cache, rooms.get())
      step("listen streams every change", listen)

      def key_column():
          keyed = db.reference("/keyed/k1")
          keyed.set({"name": "K"})
          equal(keyed.get(), {"id": "k1", "name": "K"})
      step("a table with a key column adds the pk", key_column)
      print("done", flush=True)
      """#

  @Test(
    .enabled(
      if: sdkAvailable, "needs firebase-admin in /opt/folio-venv: run scripts/install-deps.sh"))
  func theFirebaseAdminSDKReadsBackWhatItWrote() throws {
    let scratch = try CLIScratch(yaml: Self.yaml)
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let server = try ServeCLITests.Server(in: scratch.path)
    defer { #expect(server.stop() == 0) }
    try scratch.write("sdk_test.py", Self.script)
    let text = try ServePageBrowserTests.runPython(
      scratch.path + "/sdk_test.py", [String(server.port), scratch.path])
    #expect(text.hasSuffix("done\n"), "\(text)\n\(server.log)")
    #expect(!text.contains("FAIL"), "\(text)")
    // What the SDK wrote is a store like any other.
    let fsck = try scratch.folio("fsck")
    #expect(fsck.status == 0, "\(fsck.stdout)\(fsck.stderr)")
    #expect(
      scratch.read("data/users/ann.json")
        == """
        {
          "age": 32,
          "home": {
            "city": "Oslo",
            "zip": "0150"
          },
          "name": "Ann",
          "tags": [
            "a",
            "b"
          ]
        }

        """)
  }
}
