import FolioTestSupport
import Foundation
import Testing

/// `folio export` takes every query option of `folio query`, through the
/// query API: the same rows in the same order, the same usage errors.
struct ExportQueryCLITests {
  static let yaml = """
    version: 1
    tables:
      flights:
        path: flights
        order: [delay]
    """

  /// Twelve flights; delays repeat, one is missing and one is null, so ties
  /// and the value order (missing/null first) both matter.
  static let rows: [String] = {
    let delays = ["5", "-3", "12", "5", "null", "40", "0", "5", "12", "-3", nil, "7"]
    let carriers = ["AA", "UA", "AA", "DL", "UA", "AA", "DL", "UA", "AA", "DL", "UA", "AA"]
    return delays.indices.map { i in
      var members = [#""id":"f\#(i)""#, #""carrier":"\#(carriers[i])""#, #""meta":{"gate":\#(i % 4)}"#]
      if let delay = delays[i] { members.append(#""delay":\#(delay)"#) }
      return "{" + members.joined(separator: ",") + "}"
    }
  }()

  func makeStore() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: Self.yaml)
    #expect(try scratch.folio("init").status == 0)
    try scratch.write("in.ndjson", Self.rows.joined(separator: "\n") + "\n")
    let imported = try scratch.folio("import", "flights", "in.ndjson")
    #expect(imported.status == 0, "\(imported.stderr)")
    return scratch
  }

  func pks(_ stdout: String) -> [String] {
    stdout.split(separator: "\n").compactMap { line in
      (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
    }
  }

  @Test func defaultOrderIsTheFirstOrderKeyThenPK() throws {
    let scratch = try makeStore()
    defer { scratch.remove() }
    let all = try scratch.folio("export", "flights")
    #expect(all.status == 0, "\(all.stderr)")
    #expect(
      pks(all.stdout) == ["f10", "f4", "f1", "f9", "f6", "f0", "f3", "f7", "f11", "f2", "f8", "f5"])
    #expect(all.stderr.contains("exported 12 row(s) from flights as ndjson"))
  }

  /// Each option set gives exactly what `folio query` gives.
  @Test(arguments: [
    ["--where", #"carrier == "AA" && delay > 5"#],
    ["--start-at", "5", "--end-at", "12"],
    ["--start-after", "5", "--end-before", "40"],
    ["--equal-to", "5"],
    ["--equal-to", "5", "--start-key", "f3"],
    ["--start-at", "5", "--start-key", "f3", "--limit-to-first", "3"],
    ["--end-at", "5", "--end-key", "f0", "--limit-to-last", "2"],
    ["--start-after", "-3", "--start-key", "f1", "--limit-to-first", "2"],
    ["--order-by-key", "--start-at", "f10", "--end-before", "f5"],
    ["--order-by-key", "--limit-to-last", "3"],
    ["--order-by-value", "--limit-to-first", "4"],
    ["--order-by-child", "meta.gate", "--equal-to", "2"],
    ["--order-by-child", "carrier", "--start-at", "DL", "--where", "delay >= 0"],
    ["--order-by-child", "carrier", "--equal-to", "UA", "--limit-to-last", "2"],
    ["--where", "!exists(delay) || delay == null"],
    ["--where", "meta.gate in [1, 3]", "--limit-to-first", "2"],
  ])
  func matchesQuery(options: [String]) throws {
    let scratch = try makeStore()
    defer { scratch.remove() }
    let query = try FolioRunner.run(["query", "flights"] + options, in: scratch.path)
    let export = try FolioRunner.run(["export", "flights"] + options, in: scratch.path)
    #expect(query.status == 0 && export.status == 0, "\(query.stderr) \(export.stderr)")
    #expect(!query.stdout.isEmpty)
    #expect(export.stdout == query.stdout, "\(options)")
  }

  @Test func filteredCSVAndSQLite() throws {
    let scratch = try makeStore()
    defer { scratch.remove() }
    let csv = try scratch.folio(
      "export", "flights", "--where", #"carrier == "DL""#, "--format", "csv", "--columns", "id,delay")
    #expect(csv.status == 0, "\(csv.stderr)")
    #expect(csv.stdout == "id,delay\nf9,-3\nf6,0\nf3,5\n")
    let sqlite = try scratch.folio(
      "export", "flights", "--order-by-key", "--start-at", "f5", "--limit-to-first", "3", "-o", "out.db")
    #expect(sqlite.status == 0, "\(sqlite.stderr)")
    let back = try scratch.folio("import", "flights", "out.db", "--mode", "replace", "--no-commit", "--json")
    #expect(back.status == 0, "\(back.stderr)")
    #expect(back.stdout.contains(#""rows":3"#))
  }

  @Test func usageErrorsAreTheQueryCommands() throws {
    let scratch = try makeStore()
    defer { scratch.remove() }
    for options in [
      ["--order-by-key", "--order-by-child", "delay"],
      ["--start-at", "1", "--equal-to", "2"],
      ["--limit-to-first", "1", "--limit-to-last", "1"],
      ["--start-key", "f1"],
      ["--where", "delay >"],
      ["--order-by-key", "--start-at", "1", "--start-key", "f1"],
    ] {
      let query = try FolioRunner.run(["query", "flights"] + options, in: scratch.path)
      let export = try FolioRunner.run(["export", "flights"] + options, in: scratch.path)
      #expect(query.status == 64 && export.status == 64, "\(options): \(export.stderr)")
      let message = { (text: String) in text.split(separator: "\n").prefix { !$0.hasPrefix("Usage:") } }
      #expect(message(export.stderr) == message(query.stderr), "\(options)")
      #expect(export.stdout.isEmpty)
    }
    let help = try scratch.folio("export", "--help")
    for option in ["--start-after", "--end-before", "--equal-to", "--start-key", "--end-key", "--where"] {
      #expect(help.stdout.contains(option))
    }
  }
}
