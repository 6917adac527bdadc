import Folio
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
        expect(page.locator('#rows tr[data-key="k1"] td.doc')).to_contain_text("from the page")

        step("a file saved by an editor (sed -i) shows up live")
        subprocess.run(["sed", "-i", 's/"from the page"/"from sed"/', str(k1)], check=True)
        expect(page.locator('#rows tr[data-key="k1"] td.doc')).to_contain_text("from sed")
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
        assert not pathlib.Path(store, "data/todos/k9.json").exists()

        assert errors == [], errors
        browser.close()
    print("ok", flush=True)
    """#

  @Test(
    .enabled(
      if: browserAvailable,
      "needs /usr/bin/chromium and Playwright in /opt/folio-venv: run scripts/install-deps.sh"))
  func editsAndFollowsDocumentsInChromium() throws {
    let (scratch, server) = try ServeCLITests.started(arguments: ["--token", "page-token"])
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    try scratch.write("page_test.py", Self.script)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Self.python)
    process.arguments = [scratch.path + "/page_test.py", server.base, "page-token", scratch.path]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(text)")
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
}
