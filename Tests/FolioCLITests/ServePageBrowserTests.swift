import Folio
import FolioTestSupport
import Foundation
import Testing

/// The page `folio serve` answers `/` with, in a real browser: Debian's
/// headless Chromium driven by Playwright (from PyPI, in the virtual
/// environment `scripts/install-deps.sh` makes), against the built binary.
struct ServePageBrowserTests {
  /// Where `scripts/install-deps.sh` puts Playwright; `FOLIO_VENV` overrides.
  static let python =
    (ProcessInfo.processInfo.environment["FOLIO_VENV"] ?? "/opt/folio-venv") + "/bin/python"
  static let chromium = "/usr/bin/chromium"

  /// Both are installed by `scripts/install-deps.sh`; without them (a
  /// machine that never ran it) the test cannot run at all.
  static var browserAvailable: Bool {
    FileManager.default.isExecutableFile(atPath: chromium)
      && FileManager.default.isExecutableFile(atPath: python)
  }

  /// The browser's side: each step waits (Playwright's `expect`, 10 s) for
  /// what a person would see, and the script exits non-zero naming the
  /// step that failed.
  static let script = #"""
    import json, pathlib, re, subprocess, sys, urllib.request
    from playwright.sync_api import sync_playwright, expect

    base, token, store = sys.argv[1:4]
    expect.set_options(timeout=10_000)
    k1 = pathlib.Path(store, "data/todos/k1.json")

    def step(name):
        print("step:", name, flush=True)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: d.accept())

        step("the page lists the tables with their counts")
        page.goto(f"{base}/?auth={token}")
        todos = page.locator('#tables button[data-table="todos"]')
        expect(todos).to_contain_text("todos")
        expect(todos.locator(".count")).to_have_text("3")

        step("a table shows its documents in key order")
        todos.click()
        expect(page.locator("#rows tr")).to_have_count(3)
        keys = page.locator("#rows tr").evaluate_all("rows => rows.map(r => r.dataset.key)")
        assert keys == ["k1", "k2", "k3"], keys

        step("a document opens in the editor")
        page.locator('#rows tr[data-key="k1"] a').click()
        text = page.locator("#text")
        expect(text).to_have_value(re.compile(r'"title": "a"'))

        step("an edit saved in the page lands in the file")
        value = json.loads(text.input_value())
        value["title"] = "from the page"
        text.fill(json.dumps(value, indent=2))
        page.click("#save")
        expect(page.locator("#status")).to_have_text("Saved k1.")
        assert '"title": "from the page"' in k1.read_text(), k1.read_text()
        expect(page.locator('#rows tr[data-key="k1"] td[data-column="title"]')).to_contain_text("from the page")

        step("a file saved by an editor (sed -i) shows up live")
        subprocess.run(["sed", "-i", 's/"from the page"/"from sed"/', str(k1)], check=True)
        expect(page.locator('#rows tr[data-key="k1"] td[data-column="title"]')).to_contain_text("from sed")
        expect(text).to_have_value(re.compile(r'"title": "from sed"'))

        step("text that is not JSON is an error, and nothing is sent")
        text.fill("{bad")
        page.click("#save")
        expect(page.locator("#status")).to_have_class("error")
        expect(page.locator("#status")).to_contain_text("not valid JSON")

        step("the server's refusal is shown")
        text.fill('{"id": "other", "title": "x"}')
        page.click("#save")
        expect(page.locator("#status")).to_contain_text("400")

        step("a save over a change made meanwhile is refused (if-match), then forced")
        page.locator('#rows tr[data-key="k2"] a').click()
        expect(text).to_have_value(re.compile(r'"title": "b"'))
        text.fill('{"id": "k2", "title": "mine", "views": 5, "lastUpdate": 30}')
        request = urllib.request.Request(
            f"{base}/todos/k2.json?auth={token}", data=b'{"views": 6}', method="PATCH")
        urllib.request.urlopen(request).read()
        expect(page.locator("#changed")).to_be_visible()
        page.click("#save")
        expect(page.locator("#status")).to_contain_text("changed since you opened it")
        page.click("#save")
        expect(page.locator("#status")).to_have_text("Saved k2.")

        step("a document added in the page, then deleted")
        page.click("#new")
        page.fill("#key", "k9")
        page.fill("#text", '{"title": "added"}')
        page.click("#save")
        expect(page.locator('#rows tr[data-key="k9"]')).to_have_count(1)
        expect(todos.locator(".count")).to_have_text("4")
        assert pathlib.Path(store, "data/todos/k9.json").exists()
        page.click("#delete")
        expect(page.locator('#rows tr[data-key="k9"]')).to_have_count(0)
        expect(page.locator("#status")).to_have_text("Deleted k9.")
        assert not pathlib.Path(store, "data/todos/k9.json").exists()

        step("a column whose name holds a slash is saved as that column")
        page.locator('#rows tr[data-key="k3"] a').click()
        expect(text).to_have_value(re.compile(r'"size/cm": 3'))
        # Opening another document clears the last message, as the docs say.
        expect(page.locator("#status")).to_have_text("")
        value = json.loads(text.input_value())
        value["size/cm"] = 4
        value["title"] = "measured"
        text.fill(json.dumps(value, indent=2))
        page.click("#save")
        expect(page.locator("#status")).to_have_text("Saved k3.")
        k3 = json.loads(pathlib.Path(store, "data/todos/k3.json").read_text())
        assert k3["size/cm"] == 4 and k3["title"] == "measured" and "size" not in k3, k3

        assert errors == [], errors
        browser.close()
    print("ok", flush=True)
    """#

  /// The page on a table that keeps its pk in the file name (`key: null`):
  /// documents open, save and are added holding exactly what was typed.
  static let keyInNameScript = #"""
    import json, pathlib, re, sys
    from playwright.sync_api import sync_playwright, expect

    base, store = sys.argv[1:3]
    expect.set_options(timeout=10_000)
    ann = pathlib.Path(store, "data/users/ann.json")

    def step(name):
        print("step:", name, flush=True)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: d.accept())
        page.goto(base + "/")

        step("a document opens as it is stored, its own id included")
        page.locator('#tables button[data-table="users"]').click()
        page.locator('#rows tr[data-key="ann"] a').click()
        text = page.locator("#text")
        expect(text).to_have_value(re.compile(r'"id": 7'))
        assert "ann" not in text.input_value(), text.input_value()

        step("an edit that drops the id member saves as typed")
        text.fill(json.dumps({"name": "Annie"}, indent=2))
        page.click("#save")
        expect(page.locator("#status")).to_have_text("Saved ann.")
        assert json.loads(ann.read_text()) == {"name": "Annie"}, ann.read_text()

        step("a document added in the page holds what was typed")
        page.click("#new")
        page.fill("#key", "bob")
        page.fill("#text", '{"name": "Bob", "id": "b-1"}')
        page.click("#save")
        expect(page.locator('#rows tr[data-key="bob"]')).to_have_count(1)
        bob = json.loads(pathlib.Path(store, "data/users/bob.json").read_text())
        assert bob == {"name": "Bob", "id": "b-1"}, bob

        assert errors == [], errors
        browser.close()
    print("ok", flush=True)
    """#

  /// A page from another origin (another port on 127.0.0.1, served by a
  /// real HTTP server) tries what a hostile site would against a server
  /// with no token: read the store by `fetch`, write it with a `text/plain`
  /// POST (no preflight), a form POST, and a PATCH through a preflight.
  static let crossOriginScript = #"""
    import functools, http.server, json, pathlib, sys, threading
    from playwright.sync_api import sync_playwright

    base, store = sys.argv[1:3]
    folder = pathlib.Path(store, "attacker")
    folder.mkdir()
    (folder / "attack.html").write_text("""<!doctype html>
    <iframe name="sink"></iframe>
    <form id="form" method="POST" enctype="text/plain" target="sink" action="BASE/todos.json">
      <input name='{"title":"form","x":"' value='"}'>
    </form>
    <script>
    async function attack(base) {
      const out = {};
      try { out.read = await (await fetch(base + "/todos.json")).text(); }
      catch (e) { out.read = "blocked"; }
      try { out.rootRead = await (await fetch(base + "/.json")).text(); }
      catch (e) { out.rootRead = "blocked"; }
      try {
        await fetch(base + "/todos.json", { method: "POST", mode: "no-cors",
          headers: { "Content-Type": "text/plain" }, body: '{"title":"plain"}' });
      } catch (e) {}
      try {
        const r = await fetch(base + "/todos/k1.json", { method: "PATCH",
          headers: { "Content-Type": "application/json" }, body: '{"title":"patched"}' });
        out.patch = r.status;
      } catch (e) { out.patch = "blocked"; }
      document.getElementById("form").submit();
      await new Promise((done) => document.querySelector("iframe").onload = done);
      return out;
    }
    </script>""".replace("BASE", base))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    origin = "http://127.0.0.1:%d" % other.server_address[1]

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(origin + "/attack.html")
        out = page.evaluate("(base) => attack(base)", base)
        print("result:", json.dumps(out), flush=True)
        assert out["read"] == "blocked", out
        assert out["rootRead"] == "blocked", out
        assert out["patch"] == "blocked", out
        browser.close()
    other.shutdown()
    print("ok", flush=True)
    """#

  @Test(.needsBrowser)
  func aPageFromAnotherOriginCanNeitherReadNorWrite() throws {
    let (scratch, server) = try ServeCLITests.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let before = try FolioRunner.shellOutput("cat data/todos/*.json", in: scratch.path).output
    try scratch.write("attack_test.py", Self.crossOriginScript)
    let text = try Self.runPython(scratch.path + "/attack_test.py", [server.base, scratch.path])
    #expect(text.hasSuffix("ok\n"), "\(text)")
    #expect(try FolioRunner.shellOutput("cat data/todos/*.json", in: scratch.path).output == before)
    #expect(
      try FolioRunner.shellOutput("ls data/todos", in: scratch.path).output == "k1.json\nk2.json\nk3.json\n")
    // Each attempt reached the server and was refused there.
    #expect(server.log.contains("POST /todos.json 403 "), "\(server.log)")
    #expect(server.log.contains("OPTIONS /todos/k1.json 403 "), "\(server.log)")
  }

  /// Runs a Playwright script with the virtual environment's Python and
  /// returns what it printed (stdout and stderr).
  static func runPython(_ script: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Self.python)
    process.arguments = [script] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(text)")
    return text
  }

  @Test(.needsBrowser)
  func editsAndFollowsDocumentsInChromium() throws {
    let (scratch, server) = try ServeCLITests.started(arguments: ["--token", "page-token"])
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    // A column Firebase's key rules refuse, as an editor may write one.
    try scratch.write(
      "data/todos/k3.json", #"{"id": "k3", "lastUpdate": 20, "size/cm": 3, "title": "c", "views": 2}"# + "\n")
    try scratch.write("page_test.py", Self.script)
    let text = try Self.runPython(scratch.path + "/page_test.py", [server.base, "page-token", scratch.path])
    #expect(text.hasSuffix("ok\n"), "\(text)")
    // The page's edit is an op in the log, as any write; the editor's save
    // is in the file.
    let log = try FolioRunner.shellOutput("cat .folio/ops/*.ndjson", in: scratch.path).output
    #expect(log.contains(#""from the page""#))
    #expect(log.contains(#""mine""#))
    #expect(scratch.read("data/todos/k1.json")?.contains(#""title": "from sed""#) == true)
    #expect(scratch.read("data/todos/k2.json")?.contains(#""title": "mine""#) == true)
    #expect(server.log.contains("PATCH /todos/k1.json 200 "))
  }

  @Test(.needsBrowser)
  func aTableWithTheKeyInTheNameEditsAsTyped() throws {
    let scratch = try CLIScratch(yaml: "version: 1\ntables:\n  users:\n    path: data/users\n    key: null\n")
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    try scratch.write("data/users/ann.json", #"{"id": 7, "name": "Ann"}"# + "\n")
    let server = try ServeCLITests.Server(in: scratch.path)
    defer { #expect(server.stop() == 0) }
    try scratch.write("key_test.py", Self.keyInNameScript)
    let text = try Self.runPython(scratch.path + "/key_test.py", [server.base, scratch.path])
    #expect(text.hasSuffix("ok\n"), "\(text)")
  }
}

extension Trait where Self == ConditionTrait {
  /// Debian's Chromium and Playwright, which `scripts/install-deps.sh`
  /// installs; without them (a machine that never ran it) a page test
  /// cannot run at all.
  static var needsBrowser: Self {
    .enabled(
      if: ServePageBrowserTests.browserAvailable,
      "needs /usr/bin/chromium and Playwright in /opt/folio-venv: run scripts/install-deps.sh")
  }
}
