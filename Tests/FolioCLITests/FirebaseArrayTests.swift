import Folio
import FolioTestSupport
import Foundation
import Testing

/// Writes into arrays through `folio serve`, as Firebase takes them: an
/// array is an object keyed by index without nulls, a write below it
/// addresses one element and keeps the others, and it reads back as an
/// array while the SDKs' rule (`maxKey < 2 * numKeys`) says so. Checked
/// with Google's firebase-admin SDK and with curl, on the file on disk, and
/// after a sync on a second replica.
struct FirebaseArrayTests {
  static let yaml = """
    version: 1
    tables:
      t:
        path: data/t
        key: null
    """

  /// The steps, after the SDK tests' prelude (`step`, `equal`).
  static let script =
    FirebaseSDKTests.prelude + #"""
      a = db.reference("/t/a")

      def set_element():
          a.set({"tags": ["x", "y"], "l": [{"v": 1}, {"v": 2}]})
          a.child("tags/0").set("Q")
          equal(a.child("tags").get(), ["Q", "y"])
          a.child("tags/1").set("Y")
          equal(a.get()["tags"], ["Q", "Y"])
      step("set of one element keeps the others", set_element)

      def update_element():
          a.update({"tags/1": "Z"})
          equal(a.child("tags").get(), ["Q", "Z"])
          a.child("tags").update({"0": "P", "2": "R"})
          equal(a.child("tags").get(), ["P", "Z", "R"])
          a.child("l/1").update({"v": 5})
          equal(a.child("l").get(), [{"v": 1}, {"v": 5}])
      step("update below an array addresses elements", update_element)

      def delete_element():
          a.child("tags/2").delete()
          equal(a.child("tags").get(), ["P", "Z"])
          a.child("tags/0").delete()
          equal(a.child("tags").get(), [None, "Z"])
          a.child("tags/1").delete()
          equal(a.child("tags").get(), None)
          equal(a.get(), {"l": [{"v": 1}, {"v": 5}]})
      step("delete of an element leaves the others in place", delete_element)

      def nulls_in_arrays():
          b = db.reference("/t/b")
          b.set({"sparse": [None, None, "x"], "dense": ["a", None, "c"], "none": [None]})
          equal(b.get(), {"sparse": {"2": "x"}, "dense": ["a", None, "c"]})
      step("nulls in an array are absent", nulls_in_arrays)

      def push_below():
          room = db.reference("/t/room")
          room.set({"title": "r"})
          message = room.child("messages").push({"text": "hi"})
          assert message.key != "room" and len(message.key) > 10, message.key
          equal(message.get(), {"text": "hi"})
          equal(room.child("messages").get(), {message.key: {"text": "hi"}})
      step("push below a document answers with the new child's key", push_below)

      def increment_string():
          c = db.reference("/t/c")
          c.set({"s": "5", "n": 5})
          c.update({"s": {".sv": {"increment": 1}}, "n": {".sv": {"increment": 1}}})
          equal(c.get(), {"s": 1, "n": 6})
      step("a numeric string is replaced by an increment, a number added to", increment_string)
      print("done", flush=True)
      """#

  @Test(
    .enabled(
      if: FirebaseSDKTests.sdkAvailable,
      "needs firebase-admin in /opt/folio-venv: run scripts/install-deps.sh"))
  func theAdminSDKWritesIntoArraysAsFirebaseDoes() throws {
    let scratch = try CLIScratch(yaml: Self.yaml)
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let server = try ServeCLITests.Server(in: scratch.path)
    defer { #expect(server.stop() == 0) }
    try scratch.write("sdk_arrays.py", Self.script)
    let text = try ServePageBrowserTests.runPython(scratch.path + "/sdk_arrays.py", [String(server.port)])
    #expect(text.hasSuffix("done\n"), "\(text)\n\(server.log)")
    #expect(!text.contains("FAIL"), "\(text)")
    // The file holds the array as an array: a person reads it as one.
    #expect(
      scratch.read("data/t/a.json")
        == """
        {
          "l": [
            {
              "v": 1
            },
            {
              "v": 5
            }
          ]
        }

        """)
    #expect(scratch.read("data/t/b.json")?.contains(#""sparse": {"#) == true)
  }

  /// The same writes with curl, then a second replica syncs: the recorded
  /// ops replay to the same document there.
  @Test func elementWritesReplayOnAnotherReplica() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    let remote = scratch.path + "/remote.git"
    #expect(try FolioRunner.shell("git init -q --bare remote.git", in: scratch.path) == 0)
    try scratch.write("a/folio.yaml", Self.yaml)
    #expect(try FolioRunner.run(["init"], in: scratch.path + "/a").status == 0)
    #expect(try FolioRunner.shell("git remote add origin file://\(remote)", in: scratch.path + "/a") == 0)
    let server = try ServeCLITests.Server(in: scratch.path + "/a")
    let base = server.base
    func send(_ method: String, _ path: String, _ body: String? = nil) throws -> ServeCLITests.Reply {
      try ServeCLITests.curl(method, base + path, body: body)
    }
    #expect(try send("PUT", "/t/a.json", #"{"tags":["x","y","z"],"n":1}"#).status == 200)
    #expect(try send("PUT", "/t/a/tags/0.json", #""Q""#).body == #""Q""#)
    #expect(try send("PATCH", "/t/a.json", #"{"tags/1":"Y"}"#).body == #"{"tags/1":"Y"}"#)
    #expect(try send("PATCH", "/t/a/tags.json", #"{"3":"W"}"#).status == 200)
    let deleted = try send("DELETE", "/t/a/tags/2.json")
    #expect(deleted.status == 200 && deleted.body == "null")
    #expect(try send("GET", "/t/a/tags.json").body == #"["Q","Y",null,"W"]"#)
    #expect(server.stop() == 0)
    #expect(try FolioRunner.run(["sync"], in: scratch.path + "/a").status == 0)
    let clone = try FolioRunner.run(["clone", "file://" + remote, "b"], in: scratch.path)
    #expect(clone.status == 0, "\(clone.stderr)")
    #expect(scratch.read("b/data/t/a.json") == scratch.read("a/data/t/a.json"))
    // The element writes are ops of their own, so a concurrent change on
    // b to another column merges with them.
    #expect(
      try FolioRunner.run(
        ["apply", "t", "a", "--op", "update", "--columns", #"{"n":2}"#], in: scratch.path + "/b"
      )
      .status == 0)
    #expect(try FolioRunner.run(["sync"], in: scratch.path + "/b").status == 0)
    #expect(try FolioRunner.run(["sync"], in: scratch.path + "/a").status == 0)
    let merged = try FolioRunner.run(["get", "t", "a"], in: scratch.path + "/a")
    #expect(merged.stdout.contains(#""n": 2"#), "\(merged.stdout)")
    #expect(merged.stdout.contains(#""W""#) && merged.stdout.contains(#""Q""#), "\(merged.stdout)")
    #expect(scratch.read("b/data/t/a.json") == scratch.read("a/data/t/a.json"))
  }
}
