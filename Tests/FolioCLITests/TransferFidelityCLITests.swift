import Folio
import FolioTestSupport
import Foundation
import Testing

/// Import and export keep the file as it was (issue 54): public files that
/// nobody here wrote come back byte for byte, a JSON object keyed by id
/// imports one document per key, `--null` names null's spelling, and
/// `--columns` takes backticked names and refuses a field no document has.
struct TransferFidelityCLITests {
  private func store() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: nil)
    #expect(try scratch.folio("init").status == 0)
    return scratch
  }

  private func run(_ scratch: CLIScratch, _ arguments: [String], input: String? = nil) throws
    -> FolioRunner.Result
  {
    try FolioRunner.run(arguments, in: scratch.path, input: input)
  }

  /// A file's bytes as text, ending in a newline: the export always ends
  /// its last record, and some of the files here do not.
  private func contents(_ path: String) throws -> String {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return text.hasSuffix("\n") ? text : text + "\n"
  }

  /// Each file, imported into a new table and exported as CSV, is the same
  /// bytes: its columns in its order, LF, rows in file order (the pks were
  /// generated), no key column, and every number, quote, empty field and
  /// `NA` as it was.
  @Test(arguments: [
    ("penguins.csv", ["NA"]), ("penguins-raw.csv", ["NA"]), ("la-riots.csv", []), ("airports.csv", []),
    ("seattle-weather.csv", []), ("us-employment.csv", []), ("stocks.csv", []),
  ])
  func publicCSVRoundTripsByteForByte(file: String, nulls: [String]) throws {
    let path: String
    switch file {
    case "penguins.csv": path = try #require(PublicData.penguinsCSV)
    case "penguins-raw.csv": path = try #require(PublicData.penguinsRawCSV)
    default: path = try #require(PublicData.vega(file))
    }
    let scratch = try store()
    defer { scratch.remove() }
    let original = try contents(path)
    try scratch.write("in.csv", original)
    let nullFlags = nulls.flatMap { ["--null", $0] }
    let imported = try run(scratch, ["import", "t", "in.csv", "--create"] + nullFlags)
    #expect(imported.status == 0, "\(imported.stderr)")
    let exported = try run(scratch, ["export", "t", "--format", "csv"] + nullFlags)
    #expect(exported.status == 0, "\(exported.stderr)")
    #expect(exported.stdout == original, "\(file): the export differs from the file")
    // The same through TSV: the file converted by Folio and back again.
    let tsv = try run(scratch, ["export", "t", "--format", "tsv", "-o", "t.tsv"] + nullFlags)
    #expect(tsv.status == 0, "\(tsv.stderr)")
    #expect(try run(scratch, ["import", "u", "t.tsv", "--create"] + nullFlags).status == 0)
    #expect(try run(scratch, ["export", "u", "--format", "tsv"] + nullFlags).stdout == scratch.read("t.tsv"))
  }

  /// The column order is remembered in folio.yaml as `fields:`, and the key
  /// column of generated pks comes back only with --with-key, first.
  @Test func fieldsAreRememberedAndTheGeneratedKeyIsLeftOut() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("in.csv", "zeta,alpha,mid\n1,2,3\n4,5,6\n")
    #expect(try run(scratch, ["import", "t", "in.csv", "--create"]).status == 0)
    #expect(scratch.read("folio.yaml")?.contains("    fields: [zeta, alpha, mid]\n") == true)
    // Committed with the import: nothing is left to commit.
    #expect(
      try FolioRunner.shellOutput("git status --porcelain -- folio.yaml data", in: scratch.path).output
        .isEmpty)
    let withKey = try run(scratch, ["export", "t", "--format", "csv", "--with-key"])
    let lines = withKey.stdout.split(separator: "\n")
    #expect(lines.first == "id,zeta,alpha,mid")
    #expect(lines.count == 3 && lines[1].hasSuffix(",1,2,3") && lines[2].hasSuffix(",4,5,6"))
    // A second file with a new column appends it; an unlisted column of a
    // document follows the list, by name.
    try scratch.write("more.csv", "mid,extra\n7,8\n")
    #expect(try run(scratch, ["import", "t", "more.csv"]).status == 0)
    #expect(scratch.read("folio.yaml")?.contains("    fields: [zeta, alpha, mid, extra]\n") == true)
    #expect(
      try FolioRunner.shellOutput("git status --porcelain -- folio.yaml data", in: scratch.path).output
        .isEmpty)
    try scratch.write("nd.ndjson", #"{"b":1,"a":2}"# + "\n")
    #expect(try run(scratch, ["import", "t", "nd.ndjson"]).status == 0)
    let all = try run(scratch, ["export", "t", "--format", "csv"])
    #expect(all.stdout == "zeta,alpha,mid,extra,a,b\n1,2,3,,,\n4,5,6,,,\n,,7,8,,\n,,,,2,1\n")
  }

  /// A file's own pk column stays in its place, and its values stay text.
  @Test func ownKeyColumnStaysInPlace() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let text = "name,code,n\nAnn,007,1.50\nBob,\"0x1F\",-0\n\"Zoë, the \"\"first\"\"\",B2,1e5\n"
    try scratch.write("in.csv", text)
    #expect(try run(scratch, ["import", "t", "in.csv", "--create", "--pk", "code"]).status == 0)
    let exported = try run(scratch, ["export", "t", "--format", "csv"])
    #expect(exported.stdout == "name,code,n\nAnn,007,1.50\nBob,0x1F,-0\n\"Zoë, the \"\"first\"\"\",B2,1e5\n")
    let crlf = try run(scratch, ["export", "t", "--format", "csv", "--crlf", "--columns", "code,n"])
    #expect(crlf.stdout == "code,n\r\n007,1.50\r\n0x1F,-0\r\nB2,1e5\r\n")
  }

  /// Twin column names (the same text, composed and decomposed) are two
  /// fields, and come back as the file had them.
  @Test func twinColumnNamesRoundTrip() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let text = "caf\u{E9},cafe\u{301},\u{65E5}\u{672C}\n1,2,\u{1F680}\n"
    try scratch.write("in.csv", text)
    let imported = try run(scratch, ["import", "t", "in.csv", "--create"])
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(try run(scratch, ["export", "t", "--format", "csv"]).stdout.utf8.elementsEqual(text.utf8))
  }

  /// Thousands of rows in one import, most within one millisecond, come
  /// back in file order.
  @Test func generatedPKsKeepFileOrder() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let text = "n\n" + (0..<3000).map { "\(($0 * 7919) % 3000)\n" }.joined()
    try scratch.write("in.csv", text)
    #expect(try run(scratch, ["import", "t", "in.csv", "--create"]).status == 0)
    #expect(try run(scratch, ["import", "t", "in.csv"]).status == 0)
    let exported = try run(scratch, ["export", "t", "--format", "csv"])
    #expect(exported.stdout == text + text.dropFirst(2))
  }

  @Test func nullValuesOnImportAndExport() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("in.csv", "a,b,c\nNA,\"NA\",-\n1,,x\n")
    #expect(
      try run(scratch, ["import", "t", "in.csv", "--create", "--null", "NA", "--null", "-"]).status == 0)
    let rows = try run(scratch, ["export", "t", "--columns", "a,b,c"])
    #expect(rows.stdout == #"{"a":null,"b":"NA","c":null}"# + "\n" + #"{"a":1,"b":null,"c":"x"}"# + "\n")
    let csv = try run(scratch, ["export", "t", "--format", "csv", "--null", "NA", "--null", "-"])
    #expect(csv.stdout == "a,b,c\nNA,\"NA\",NA\n1,NA,x\n")
    // Without --null, null is an empty field and "NA" needs no quotes.
    #expect(try run(scratch, ["export", "t", "--format", "csv"]).stdout == "a,b,c\n,NA,\n1,,x\n")
  }

  /// `--columns` and `--select` take backticked names and nested paths.
  @Test func columnsTakeBacktickedNamesAndPaths() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write(
      "in.ndjson",
      #"{"id":"a","dep time":"09:00","o":{"d":1,"x.y":2},"a,b":3}"# + "\n" + #"{"id":"b","dep time":null}"#
        + "\n")
    #expect(try run(scratch, ["import", "t", "in.ndjson", "--create"]).status == 0)
    let csv = try run(
      scratch, ["export", "t", "--format", "csv", "--columns", "`dep time`,o.d,o.`x.y`,`a,b`"])
    #expect(csv.status == 0, "\(csv.stderr)")
    #expect(csv.stdout == "dep time,o.d,o.x.y,\"a,b\"\n09:00,1,2,3\n,,,\n")
    let select = try run(scratch, ["export", "t", "--select", "o.d,id"])
    // NDJSON members are written in name order, as every export writes them.
    #expect(select.stdout == #"{"id":"a","o.d":1}"# + "\n" + #"{"id":"b"}"# + "\n")
  }

  @Test func unknownColumnNamesTheNearestField() throws {
    let path = try #require(PublicData.penguinsCSV)
    let scratch = try store()
    defer { scratch.remove() }
    #expect(try run(scratch, ["import", "penguins", path, "--create", "--null", "NA"]).status == 0)
    let typo = try run(
      scratch, ["export", "penguins", "--format", "csv", "--columns", "species,bill_lenght_mm"])
    #expect(typo.status == 64)
    #expect(typo.stdout.isEmpty)
    #expect(
      typo.stderr.hasPrefix(
        "error: no document of table 'penguins' has the field 'bill_lenght_mm' named in the columns; "
          + "did you mean bill_length_mm?\nUsage: folio export"), "\(typo.stderr)")
    let nested = try run(scratch, ["export", "penguins", "--select", "`bill length`"])
    #expect(nested.status == 64)
    #expect(
      nested.stderr.contains("has the field 'bill length' named in the columns; did you mean bill_length_mm?")
    )
  }

  @Test(arguments: [
    (["--columns", "a,`b"], "error: --columns:1:3: "),
    (["--columns", "a,,b"], "error: --columns:1:3: "),
    (["--columns", "a", "--select", "b"], "error: give --columns or --select, not both"),
    (["--null", "NA"], "error: --null applies to --format csv or tsv, not ndjson"),
    (["--format", "json", "--crlf"], "error: --crlf applies to --format csv or tsv, not json"),
    (["-o", "t.db", "--with-key"], "error: --with-key applies to --format csv or tsv, not sqlite"),
  ])
  func badColumnListsAreUsageErrors(arguments: [String], prefix: String) throws {
    let scratch = try store()
    defer { scratch.remove() }
    let result = try run(scratch, ["export", "t"] + arguments)
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix(prefix), "\(result.stderr)")
    #expect(result.stderr.contains("Usage: folio export"))
  }

  /// A JSON object keyed by id (a Firebase export) built by Python from
  /// vega's cars.json imports one document per key, and exports to what
  /// Python's json module reads from the file.
  @Test(arguments: [false, true])
  func keyedObjectMatchesPythonsReading(fromStdin: Bool) throws {
    let cars = try #require(PublicData.vega("cars.json"))
    let scratch = try store()
    defer { scratch.remove() }
    let build = """
      import json, sys
      rows = json.load(open(sys.argv[1]))
      keyed = {"car-%03d %s" % (i, r["Name"]): r for i, r in enumerate(rows)}
      json.dump(keyed, open("keyed.json", "w"), indent=2, ensure_ascii=False)
      """
    try scratch.write("build.py", build)
    #expect(try FolioRunner.shell("'\(PublicData.python)' build.py '\(cars)'", in: scratch.path) == 0)
    let imported =
      fromStdin
      ? try run(
        scratch, ["import", "cars", "-", "--create", "--key-in-name"], input: scratch.read("keyed.json"))
      : try run(scratch, ["import", "cars", "keyed.json", "--create", "--key-in-name"])
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(imported.stdout.hasPrefix("imported 406 row(s) into cars: 406 created"), "\(imported.stdout)")
    let exported = try run(scratch, ["export", "cars", "-o", "out.ndjson"])
    #expect(exported.status == 0, "\(exported.stderr)")
    let check = """
      import json
      keyed = json.load(open("keyed.json"))
      out = {}
      for line in open("out.ndjson"):
          row = json.loads(line)
          out[row.pop("_key")] = row
      print("same" if out == keyed and list(out) == sorted(keyed) else "differ")
      """
    try scratch.write("check.py", check)
    let compared = try FolioRunner.shellOutput("'\(PublicData.python)' check.py", in: scratch.path)
    #expect(compared.output == "same\n")
  }

  @Test func keyedMemberThatIsNotAnObjectIsABadRow() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("k.json", "{\n  \"a\": {\"x\": 1},\n  \"b\": [1, 2]\n}\n")
    let result = try run(scratch, ["import", "k", "k.json", "--create"])
    #expect(result.status == 1)
    #expect(
      result.stderr.contains(
        "k.json:3:8: error: the value of member 'b' must be an object (one document), not an array"),
      "\(result.stderr)")
    let skipped = try run(scratch, ["import", "k", "k.json", "--create", "--continue"])
    #expect(skipped.status == 0)
    #expect(try run(scratch, ["get", "k", "a"]).stdout.contains(#""x": 1"#))
    // The key column, when the value has it, must agree with the key.
    try scratch.write("clash.json", #"{"a": {"id": "b"}}"#)
    let clash = try run(scratch, ["import", "c", "clash.json", "--create"])
    #expect(clash.status == 1)
    #expect(
      clash.stderr.contains(
        #"clash.json:1:1: error: member 'a' holds 'id' "b"; the key is the pk, so they must agree"#),
      "\(clash.stderr)")
  }

  @Test func nullOnJSONInputIsAWarning() throws {
    let scratch = try store()
    defer { scratch.remove() }
    try scratch.write("in.ndjson", #"{"a":"NA"}"# + "\n")
    let result = try run(scratch, ["import", "t", "in.ndjson", "--create", "--null", "NA"])
    #expect(result.status == 0)
    #expect(
      result.stderr.hasSuffix("warning: --null applies to CSV/TSV input; in.ndjson was read as ndjson\n"))
    #expect(try run(scratch, ["export", "t", "--columns", "a"]).stdout == #"{"a":"NA"}"# + "\n")
  }

  @Test func importHelpSaysAKeyedObjectImports() throws {
    let scratch = try store()
    defer { scratch.remove() }
    let help = try run(scratch, ["import", "--help"])
    #expect(help.status == 0)
    #expect(help.stdout.contains(#"the shape of a Firebase"#))
    #expect(help.stdout.contains("--null VALUE"))
    let export = try run(scratch, ["export", "--help"])
    #expect(
      export.stdout.contains("--with-key") && export.stdout.contains("--crlf")
        && export.stdout.contains("--select"))
  }
}
