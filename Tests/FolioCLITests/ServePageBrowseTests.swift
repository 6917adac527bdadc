import Folio
import FolioTestSupport
import Foundation
import Testing

/// The page as a data browser, in Debian's headless Chromium driven by
/// Playwright: columns, ordering by indexed and unindexed paths, paging in
/// both directions, the `where` box, the URL as the view, live rows,
/// history, blame and conflicts, and the layout at desktop and phone
/// widths.
struct ServePageBrowseTests {
  static let yaml = """
    version: 1
    tables:
      items:
        path: data/items
        order: [n]
        columns:
          views: counter
      people:
        path: data/people
        schema: schemas/people.schema.json
    """

  static let schema = """
    {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"},
     "age": {"type": "integer"}, "email": {"type": "string"}}}
    """

  /// 120 items: `n` and `title` each a permutation of 0…119, so every
  /// ordering has one right answer.
  static let rows = (0..<120).map { i in
    #"{"id": "i\#(String(format: "%03d", i))", "n": \#((i * 37) % 120), "title": "t\#(String(format: "%03d", (i * 53) % 120))", "views": 0}"#
  }.joined(separator: "\n")

  static let script = #"""
    import json, pathlib, re, subprocess, sys
    from playwright.sync_api import sync_playwright, expect

    base, store, folio = sys.argv[1:4]
    expect.set_options(timeout=15_000)
    items = {f"i{i:03d}": {"n": (i * 37) % 120, "title": f"t{(i * 53) % 120:03d}"} for i in range(120)}
    by_n = sorted(items, key=lambda k: items[k]["n"])
    by_title = sorted(items, key=lambda k: items[k]["title"])

    def step(name):
        print("step:", name, flush=True)

    def shown(page):
        return page.locator("#rows tr").evaluate_all("rows => rows.map(r => r.dataset.key)")

    def run(*args):
        subprocess.run([folio, *args], cwd=store, check=True, capture_output=True)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))

        # Nothing but the server itself: no CDN, no font, no script elsewhere.
        elsewhere = []
        page.on("request", lambda r: None if r.url.startswith(base) else elsewhere.append(r.url))

        step("a table is a grid: the pk first, then the columns, with a count")
        page.goto(base + "/?t=items")
        expect(page.locator("#rows tr")).to_have_count(50)
        headers = page.locator("#columns th").evaluate_all("hs => hs.map(h => h.textContent)")
        assert headers == ["id", "n", "title", "views"], headers
        expect(page.locator("#count")).to_have_text("120 documents")
        assert shown(page) == sorted(items)[:50]
        expect(page.locator("#prev")).to_be_disabled()

        step("pages move by cursor both ways, and the last page ends Next")
        page.click("#next")
        expect(page.locator('#rows tr').first).to_have_attribute("data-key", "i050")
        assert shown(page) == sorted(items)[50:100], shown(page)
        page.click("#next")
        expect(page.locator("#rows tr")).to_have_count(20)
        expect(page.locator("#next")).to_be_disabled()
        page.click("#prev")
        expect(page.locator('#rows tr').first).to_have_attribute("data-key", "i050")
        expect(page.locator("#rows tr")).to_have_count(50)
        page.click("#prev")
        expect(page.locator('#rows tr').first).to_have_attribute("data-key", "i000")
        expect(page.locator("#prev")).to_be_disabled()

        step("a column with an index orders ascending, then descending, and pages")
        page.click('#columns th[data-path="n"] button')
        expect(page.locator('#columns th[data-path="n"]')).to_have_attribute("aria-sort", "ascending")
        expect(page.locator('#rows tr').first).to_have_attribute("data-key", by_n[0])
        assert shown(page) == by_n[:50], shown(page)
        page.click("#next")
        expect(page.locator('#rows tr').first).to_have_attribute("data-key", by_n[50])
        assert shown(page) == by_n[50:100]
        page.click('#columns th[data-path="n"] button')
        expect(page.locator('#columns th[data-path="n"]')).to_have_attribute("aria-sort", "descending")
        expect(page.locator('#rows tr').first).to_have_attribute("data-key", by_n[-1])
        assert shown(page) == list(reversed(by_n))[:50], shown(page)
        page.click("#next")
        expect(page.locator('#rows tr').first).to_have_attribute("data-key", list(reversed(by_n))[50])

        step("a column without an index orders too")
        page.click('#columns th[data-path="title"] button')
        expect(page.locator('#rows tr').first).to_have_attribute("data-key", by_title[0])
        assert shown(page) == by_title[:50], shown(page)

        step("a where mistake is shown at its column; a good one filters and counts")
        page.fill("#where", "n >")
        page.click('#filter button[type="submit"]')
        expect(page.locator("#where-error")).to_be_visible()
        text = page.locator("#where-error").text_content()
        lines = text.split("\n")
        assert lines[0] == "n >" and lines[1].index("^") == 3, text
        expect(page.locator("#where")).to_have_attribute("aria-invalid", "true")
        expect(page.locator("#next")).to_be_disabled()
        expect(page.locator("#rows tr")).to_have_count(0)
        page.fill("#where", "n < 10")
        page.click('#filter button[type="submit"]')
        expect(page.locator("#count")).to_have_text("10 documents match")
        expect(page.locator("#rows tr")).to_have_count(10)
        expect(page.locator("#where-error")).to_be_hidden()

        step("the URL is the view: reload, back and forward give it again")
        url = page.url
        assert "w=n" in url and "o=title" in url, url
        page.reload()
        expect(page.locator("#rows tr")).to_have_count(10)
        expect(page.locator("#where")).to_have_value("n < 10")
        expect(page.locator('#columns th[data-path="title"]')).to_have_attribute("aria-sort", "ascending")
        # Each filter is a step in the history, the mistake included.
        page.go_back()
        expect(page.locator("#where")).to_have_value("n >")
        expect(page.locator("#where-error")).to_be_visible()
        page.go_back()
        expect(page.locator("#where")).to_have_value("")
        expect(page.locator("#rows tr")).to_have_count(50)
        page.go_forward()
        page.go_forward()
        expect(page.locator("#where")).to_have_value("n < 10")
        expect(page.locator("#rows tr")).to_have_count(10)
        fresh = browser.new_page()
        fresh.goto(url)
        expect(fresh.locator("#rows tr")).to_have_count(10)
        expect(fresh.locator("#count")).to_have_text("10 documents match")
        fresh.close()

        step("Columns picks the grid's columns, in order, as query --select does, and stays in the URL")
        page.fill("#select", "title , `n`")
        page.click('#filter button[type="submit"]')
        expect(page.locator("#columns th")).to_have_count(3)
        headers = page.locator("#columns th").evaluate_all("hs => hs.map(h => h.textContent)")
        assert headers == ["id", "title", "n"], headers
        expect(page.locator("#rows tr")).to_have_count(10)
        first = shown(page)[0]
        expect(page.locator(f'#rows tr[data-key="{first}"] td[data-column="n"]')).to_have_text(str(items[first]["n"]))
        assert "s=title" in page.url, page.url
        page.reload()
        expect(page.locator("#select")).to_have_value("title , `n`")
        expect(page.locator("#columns th")).to_have_count(3)
        page.fill("#select", "title, `n")
        page.click('#filter button[type="submit"]')
        expect(page.locator("#where-error")).to_contain_text("unterminated")
        expect(page.locator("#select")).to_have_attribute("aria-invalid", "true")
        page.click("#clear-filter")
        expect(page.locator("#columns th")).to_have_count(4)
        expect(page.locator("#select")).to_have_value("")

        step("a change from the command line lights up its row; a deleted row leaves")
        page.goto(base + "/?t=items")
        expect(page.locator("#rows tr")).to_have_count(50)
        run("apply", "items", "i005", "--op", "update", "--columns", '{"title": "from the CLI"}')
        row = page.locator('#rows tr[data-key="i005"]')
        expect(row.locator('td[data-column="title"]')).to_have_text("from the CLI")
        expect(row).to_have_class("flash")
        run("rm", "items", "i006")
        expect(page.locator('#rows tr[data-key="i006"]')).to_have_count(0)
        expect(page.locator("#rows tr")).to_have_count(50)
        expect(page.locator("#count")).to_have_text("119 documents")

        step("a document has its history and its blame, and the tab is in the URL")
        page.locator('#rows tr[data-key="i005"] a').click()
        expect(page.locator("#text")).to_have_value(re.compile(r'"title": "from the CLI"'))
        page.click("#tab-history")
        expect(page.locator("#versions li").first).to_contain_text("import")
        assert "v=history" in page.url and "k=i005" in page.url, page.url
        page.click("#tab-blame")
        expect(page.locator('#blame tr[data-path="/n"]')).to_contain_text("import")
        expect(page.locator('#blame tr[data-path="/title"]')).to_contain_text("not committed")
        page.reload()
        expect(page.locator("#tab-blame")).to_have_attribute("aria-selected", "true")
        expect(page.locator('#blame tr[data-path="/title"]')).to_contain_text("update")

        step("a schema gives the columns, even one no document has yet")
        page.goto(base + "/?t=people")
        expect(page.locator("#rows tr")).to_have_count(1)
        headers = page.locator("#columns th").evaluate_all("hs => hs.map(h => h.textContent)")
        assert headers == ["id", "name", "age", "email"], headers

        step("a schema mistake on save is shown at its line")
        page.locator('#rows tr[data-key="p1"] a').click()
        expect(page.locator("#text")).to_have_value(re.compile(r'"age": 30'))
        page.fill("#text", '{\n  "id": "p1",\n  "name": "Ann",\n  "age": "old"\n}')
        page.click("#save")
        expect(page.locator("#status")).to_contain_text("line 4:")
        expect(page.locator("#status")).to_have_class("error")

        step("another document clears the old message")
        page.goto(base + "/?t=items&k=i001")
        expect(page.locator("#text")).to_have_value(re.compile(r'"id": "i001"'))
        expect(page.locator("#status")).to_have_text("")

        step("a short page keeps a short header")
        page.goto(base + "/?t=items&w=n%20%3C%202")
        expect(page.locator("#rows tr")).to_have_count(2)
        height = page.locator("header").bounding_box()["height"]
        assert height < 80, height

        step("a table taken out of folio.yaml leaves the sidebar and the view")
        page.goto(base + "/?t=people&k=p1")
        expect(page.locator("#text")).to_have_value(re.compile(r'"name": "Ann"'))
        yaml = pathlib.Path(store, "folio.yaml")
        yaml.write_text(yaml.read_text().split("  people:")[0])
        expect(page.locator('#tables button[data-table="people"]')).to_have_count(0)
        expect(page.locator("#status")).to_contain_text("no longer in folio.yaml")
        expect(page.locator("#table-view")).to_be_hidden()
        expect(page.locator("#editor")).to_be_hidden()

        step("at a phone's width nothing runs off the side")
        phone = browser.new_page(viewport={"width": 390, "height": 800})
        phone.goto(base + "/?t=items")
        expect(phone.locator("#rows tr")).to_have_count(50)
        width = phone.evaluate("document.body.scrollWidth")
        assert width <= 390, width
        expect(phone.locator('#tables button[data-table="items"]')).to_be_visible()
        phone.close()

        step("the keyboard reaches the tables, the grid and the tabs")
        page.goto(base + "/?t=items&k=i001")
        expect(page.locator("#text")).to_have_value(re.compile(r'"id": "i001"'))
        page.focus("#tab-edit")
        page.keyboard.press("ArrowRight")
        expect(page.locator("#tab-history")).to_be_focused()
        expect(page.locator("#tab-history")).to_have_attribute("aria-selected", "true")
        for label in ["Where", "Document JSON"]:
            assert page.get_by_label(label).count() == 1, label

        step("text and links are readable against the background (WCAG AA, 4.5:1)")
        ratio = page.evaluate('''() => {
            const rgb = (c) => c.match(/[0-9.]+/g).slice(0, 3).map(Number).map((v) => {
                v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
            const lum = (c) => { const [r, g, b] = rgb(c); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
            let bg = getComputedStyle(document.body).backgroundColor;
            if (bg === "rgba(0, 0, 0, 0)") bg = "rgb(255, 255, 255)";
            const pairs = [document.body, document.querySelector("#rows a"), document.querySelector("th button")];
            return Math.min(...pairs.map((e) => {
                const a = lum(getComputedStyle(e).color), b = lum(bg);
                return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); }));
        }''')
        assert ratio >= 4.5, ratio
        assert elsewhere == [], elsewhere

        assert errors == [], errors
        browser.close()
    print("ok", flush=True)
    """#

  @Test(.needsBrowser)
  func browsesOrdersFiltersAndLinksInChromium() throws {
    let scratch = try CLIScratch(yaml: Self.yaml)
    defer { scratch.remove() }
    try scratch.write("schemas/people.schema.json", Self.schema)
    #expect(try scratch.folio("init").status == 0)
    try scratch.write("items.ndjson", Self.rows + "\n")
    let imported = try scratch.folio("import", "items", "items.ndjson")
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(try scratch.folio("put", "people", "p1", input: #"{"name": "Ann", "age": 30}"#).status == 0)
    #expect(try scratch.folio("commit", "-m", "people").status == 0)
    let server = try ServeCLITests.Server(in: scratch.path)
    defer { #expect(server.stop() == 0) }
    try scratch.write("browse_test.py", Self.script)
    let text = try ServePageBrowserTests.runPython(
      scratch.path + "/browse_test.py", [server.base, scratch.path, FolioRunner.binary])
    #expect(text.hasSuffix("ok\n"), "\(text)\n\(server.log)")
  }

  /// A wrong token says so, where a missing one asks for one.
  static let tokenScript = #"""
    import sys
    from playwright.sync_api import sync_playwright, expect

    base = sys.argv[1]
    expect.set_options(timeout=15_000)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(base + "/")
        expect(page.locator("#status")).to_contain_text("wants a token")
        expect(page.locator("#login")).to_be_visible()
        page.goto(base + "/?auth=wrong")
        expect(page.locator("#status")).to_contain_text("did not accept the token")
        page.fill("#token", "right")
        page.click('#login button[type="submit"]')
        expect(page.locator('#tables button[data-table="todos"]')).to_be_visible()
        browser.close()
    print("ok", flush=True)
    """#

  @Test(.needsBrowser)
  func aWrongTokenIsToldFromAMissingOne() throws {
    let (scratch, server) = try ServeCLITests.started(arguments: ["--token", "right"])
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    try scratch.write("token_test.py", Self.tokenScript)
    let text = try ServePageBrowserTests.runPython(scratch.path + "/token_test.py", [server.base])
    #expect(text.hasSuffix("ok\n"), "\(text)")
  }

  /// Conflicts from a real merge: two replicas set the same title, `folio
  /// sync` records the loser, and the page's Take other settles it as
  /// `folio conflicts resolve` does.
  static let conflictScript = #"""
    import json, pathlib, re, sys
    from playwright.sync_api import sync_playwright, expect

    base, store, r0, r1 = sys.argv[1:5]
    expect.set_options(timeout=15_000)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page()

        # History and blame of a document changed on both replicas, merged.
        page.goto(base + "/?t=todos&k=t&v=history")
        # The seed, and each replica's change (the merge may add one more).
        expect(page.locator("#versions li").nth(2)).to_be_visible()
        expect(page.locator("#versions li").first).to_contain_text("/title")
        page.click("#tab-blame")
        title = page.locator('#blame tr[data-path="/title"]')
        expect(title).to_contain_text("update")
        winner = r0 if r0 in title.text_content() else r1
        assert winner in title.text_content(), title.text_content()

        page.click("#tab-conflicts")
        item = page.locator('#conflicts li[data-path="title"]')
        expect(item).to_contain_text("lost")
        expect(page.locator("#conflict-count")).to_have_text("(1)")
        item.get_by_role("button", name=re.compile("^Take")).click()
        expect(page.locator("#conflicts")).to_have_text("No open conflicts.")
        expect(page.locator("#status")).to_contain_text("Resolved title")
        browser.close()
    print("ok", flush=True)
    """#

  @Test(.needsBrowser)
  func conflictsAreSettledFromThePage() throws {
    let box = try GitPullTests.Sandbox()
    defer { box.root.remove() }
    try box.seedAndClone(["t": #"{"title": "first", "views": 0}"#])
    try box.folio(["apply", "todos", "t", "--op", "update", "--columns", #"{"title": "r0's"}"#], in: "r0")
    try box.folio(["sync"], in: "r0")
    try box.folio(["apply", "todos", "t", "--op", "update", "--columns", #"{"title": "r1's"}"#], in: "r1")
    try box.folio(["sync"], in: "r1")
    let open = try box.folio(["conflicts", "--json"], in: "r1")
    #expect(open.stdout.contains(#""path":"title""#), "\(open.stdout)")
    let kept = try #require(box.file("r1/todos/t.json"))
    let lost = kept.contains("r1's") ? "r0's" : "r1's"

    let server = try ServeCLITests.Server(in: box.root.path + "/r1")
    defer { #expect(server.stop() == 0) }
    try box.root.write("r1/conflict_test.py", Self.conflictScript)
    let replicas = try ["r0", "r1"].map {
      try #require(box.file($0 + "/.git/folio/replica")).trimmingCharacters(in: .whitespacesAndNewlines)
    }
    let text = try ServePageBrowserTests.runPython(
      box.root.path + "/r1/conflict_test.py", [server.base, box.root.path + "/r1"] + replicas)
    #expect(text.hasSuffix("ok\n"), "\(text)\n\(server.log)")
    #expect(box.file("r1/todos/t.json")?.contains(lost) == true, "\(box.file("r1/todos/t.json") ?? "")")
    #expect(try box.folio(["conflicts", "--json"], in: "r1").stdout.isEmpty)
  }
}
