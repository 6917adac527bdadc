import FolioTestSupport
import Foundation
import Testing

/// The page's export links and facet counts, in Debian's Chromium driven by
/// Playwright, on the penguins of PyPI's palmerpenguins (`NA` where nothing
/// was measured), checked against Python's own reading of the CSV file.
struct ServePageExportTests {
  static let script = #"""
    import collections, csv, json, re, sys, urllib.error, urllib.parse, urllib.request
    from playwright.sync_api import sync_playwright, expect

    base, source, token = sys.argv[1:4]
    expect.set_options(timeout=15_000)

    def step(name):
        print("step:", name, flush=True)

    def number(text):
        return None if text == "NA" else float(text)

    with open(source, newline="") as f:
        penguins = list(csv.DictReader(f))
    heavy = [p for p in penguins if number(p["body_mass_g"]) is not None and number(p["body_mass_g"]) > 4000]
    columns = ["species", "island", "body_mass_g"]

    def fetch(url, headers=None):
        request = urllib.request.Request(url, headers=headers or {})
        try:
            with urllib.request.urlopen(request) as reply:
                return reply.status, reply.read(), dict(reply.headers)
        except urllib.error.HTTPError as error:
            return error.code, error.read(), dict(error.headers)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(accept_downloads=True)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))

        step("a filtered, ordered view with chosen columns")
        page.goto(base + "/?auth=" + token + "&t=penguins")
        expect(page.locator("#count")).to_have_text(f"{len(penguins)} documents")
        page.fill("#where", "body_mass_g > 4000")
        page.fill("#select", ", ".join(columns))
        page.click('#filter button[type="submit"]')
        expect(page.locator("#count")).to_have_text(f"{len(heavy)} documents match")
        page.click('#columns th[data-path="body_mass_g"] button')
        page.click('#columns th[data-path="body_mass_g"] button')
        expect(page.locator('#columns th[data-path="body_mass_g"]')).to_have_attribute("aria-sort", "descending")

        step("CSV downloads the whole view: every match, heaviest first, the chosen columns")
        with page.expect_download() as info:
            page.click("#export-csv")
        download = info.value
        assert download.suggested_filename == "penguins.csv", download.suggested_filename
        body = open(download.path(), "rb").read()
        rows = list(csv.DictReader(body.decode().splitlines()))
        assert list(rows[0].keys()) == columns, rows[0].keys()
        masses = [float(r["body_mass_g"]) for r in rows]
        assert masses == sorted(masses, reverse=True), masses[:10]
        def key(row):
            return (row["species"], row["island"], float(row["body_mass_g"]))
        assert sorted(map(key, rows)) == sorted(map(key, heavy)), (len(rows), len(heavy))
        assert len(rows) > 50  # more than the page shows

        step("the curl line is the same URL, with the token in a header")
        line = page.locator("#export-curl").text_content()
        match = re.fullmatch(r"curl -H \"Authorization: Bearer \$FOLIO_SERVE_TOKEN\" '([^']+)'", line)
        assert match, line
        plain = match.group(1)
        assert "auth=" not in plain and plain.startswith(base + "/.info/export/penguins.csv?"), plain
        status, fetched, headers = fetch(plain, {"Authorization": "Bearer " + token})
        assert status == 200 and fetched == body, (status, fetched[:200])
        assert headers["Content-Type"].startswith("text/csv"), headers
        assert headers.get("Access-Control-Allow-Origin") is None, headers
        status, refused, _ = fetch(plain)
        assert status == 401, (status, refused)

        step("NDJSON gives the same rows, values typed")
        with page.expect_download() as info:
            page.click("#export-ndjson")
        lines = open(info.value.path()).read().splitlines()
        objects = [json.loads(l) for l in lines]
        assert all(sorted(o.keys()) == sorted(columns) for o in objects), objects[:1]
        assert [o["body_mass_g"] for o in objects] == [int(m) for m in masses]

        step("facets count a column among the matches, most common first")
        page.select_option("#facet", "species")
        expected = collections.Counter(p["species"] for p in heavy).most_common()
        items = page.locator("#facet-values li")
        expect(items).to_have_count(len(expected))
        shown = items.evaluate_all("items => items.map(i => [i.querySelector('button span').textContent, Number(i.querySelector('.count').textContent)])")
        assert [tuple(s) for s in shown] == expected, (shown, expected)
        assert "from the index" not in page.locator("#facet-note").text_content()
        assert "f=species" in page.url, page.url

        step("a facet value narrows the filter")
        top = expected[0]
        page.locator("#facet-values li button").first.click()
        both = [p for p in heavy if p["species"] == top[0]]
        expect(page.locator("#count")).to_have_text(f"{len(both)} documents match")
        expect(page.locator("#where")).to_have_value(f'(body_mass_g > 4000) && species == "{top[0]}"')
        expect(page.locator("#facet-values li")).to_have_count(1)

        step("without a filter an indexed column counts from the index, NA apart")
        page.click("#clear-filter")
        page.select_option("#facet", "sex")
        sexes = collections.Counter(p["sex"] for p in penguins if p["sex"] != "NA").most_common()
        nulls = sum(1 for p in penguins if p["sex"] == "NA")
        expect(page.locator("#facet-values li")).to_have_count(len(sexes))
        expect(page.locator("#facet-note")).to_contain_text(f"{nulls} without a value, of {len(penguins)} (from the index)")
        shown = page.locator("#facet-values li").evaluate_all("items => items.map(i => [i.querySelector('button span').textContent, Number(i.querySelector('.count').textContent)])")
        assert [tuple(s) for s in shown] == sexes, (shown, sexes)

        step("a misspelt facet column is named with the nearest")
        page.goto(base + "/?auth=" + token + "&t=penguins&f=sexx")
        expect(page.locator("#facet-note")).to_contain_text("did you mean 'sex'?")

        assert not errors, errors
        browser.close()
    print("ok", flush=True)
    """#

  @Test(.needsBrowser)
  func exportsTheViewAndCountsFacetsInChromium() throws {
    let source = try #require(PublicData.penguinsCSV, PublicData.missingReason)
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    let imported = try scratch.folio("import", "penguins", source, "--create", "--null", "NA")
    try #require(imported.status == 0, "\(imported.stderr)")
    #expect(try scratch.folio("tables", "index", "add", "penguins", "sex").status == 0)
    let server = try ServeCLITests.Server(in: scratch.path, arguments: ["--token", "export-token"])
    defer { #expect(server.stop() == 0) }
    try scratch.write("export_test.py", Self.script)
    let text = try ServePageBrowserTests.runPython(
      scratch.path + "/export_test.py", [server.base, source, "export-token"])
    #expect(text.hasSuffix("ok\n"), "\(text)\n\(server.log)")
  }

  /// What the export and facet paths refuse, each with a status and a
  /// message that says what to send instead; and what an export holds
  /// against `folio export` of the same query.
  @Test func exportsAndFacetsRefuseWhatTheyCannotAnswer() throws {
    let (scratch, server) = try ServeCLITests.started()
    defer {
      #expect(server.stop() == 0)
      scratch.remove()
    }
    let base = server.base
    let cases: [(String, String, Int, String)] = [
      ("GET", "/.info/export/nope.csv", 404, "UNKNOWN_TABLE"),
      ("GET", "/.info/export/todos.xlsx", 400, "export as .csv, .tsv, .ndjson or .json"),
      ("GET", "/.info/export/todos.sqlite", 400, "export as .csv"),
      ("GET", "/.info/export/todos", 400, "name one table and a format"),
      ("GET", "/.info/export/todos.csv?desc=yes", 400, "desc must be true or false"),
      // A limit with desc would crash a precondition, not answer 400.
      (
        "GET", "/.info/export/todos.csv?orderBy=%22$key%22&limitToFirst=1&desc=true", 400,
        "drop limitToFirst and limitToLast"
      ),
      ("GET", "/.info/export/todos.csv?select=titel", 400, "did you mean title"),
      ("GET", "/.info/export/todos.csv?where=views%20%3E", 400, "INVALID_QUERY"),
      ("POST", "/.info/export/todos.csv", 405, "read-only"),
      ("GET", "/.info/facets/todos.json", 400, "name the column to count"),
      ("GET", "/.info/facets/todos.json?path=title,views", 400, "one column at a time"),
      (
        "GET", "/.info/facets/todos.json?path=title&limit=0", 400,
        "limit must be a whole number from 1 to 100"
      ),
      ("GET", "/.info/facets/todos.json?path=title&limit=101", 400, "limit must be"),
      ("GET", "/.info/facets/todos.csv?path=title", 400, "facets are JSON"),
      ("GET", "/.info/facets/todos.json?path=veiws", 400, "did you mean 'views'?"),
    ]
    for (method, path, status, words) in cases {
      let reply = try ServeCLITests.curl(method, base + path)
      #expect(reply.status == status, "\(method) \(path): \(reply.body)")
      #expect(reply.body.contains(words), "\(method) \(path): \(reply.body)")
    }
    // The export is what `folio export` writes for the same query.
    let served = try ServeCLITests.curl(
      "GET",
      base + "/.info/export/todos.csv?orderBy=%22views%22&desc=true&where=views%20%3E%201&select=title,views")
    #expect(served.status == 200)
    #expect(served.headers["content-disposition"] == "attachment; filename=\"todos.csv\"")
    let cli = try scratch.folio(
      "export", "todos", "--format", "csv", "--order-by-child", "views", "--where", "views > 1", "--select",
      "title,views")
    #expect(cli.status == 0, "\(cli.stderr)")
    let reversed =
      [cli.stdout.split(separator: "\n")[0]] + cli.stdout.split(separator: "\n").dropFirst().reversed()
    #expect(served.body == reversed.joined(separator: "\n") + "\n", "\(served.body) vs \(cli.stdout)")
    #expect(served.body == "title,views\nb,5\nc,2\n")
    let facets = try ServeCLITests.curl(
      "GET", base + "/.info/facets/todos.json?path=views&where=views%20%3C%205")
    #expect(facets.json?["total"] == 2 && facets.json?["nulls"] == 0, "\(facets.body)")
    #expect(facets.json?["fromIndex"] == false)
  }
}
