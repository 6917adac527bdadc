import Folio
import FolioTestSupport
import Foundation
import Testing

/// Filters give the answers SQLite and Python give, on public data that
/// nobody here wrote: CSV files with `NA` and empty fields, column names
/// with spaces and parentheses, JSON arrays with nulls and with missing
/// fields. Every comparison operator, against numbers, strings, `null` and
/// booleans, alone and combined, is counted on each table three ways: by a
/// scan, through secondary indexes on every column, and ordered by the
/// compared column's index (whose range the filter narrows); through the
/// CLI for a seeded share of the cases, and through the Swift API for all.
@Suite(.serialized)
struct FilterReferenceCLITests {
  struct Dataset {
    var table: String
    var path: String?
    var format: String
    var atoms: Int
    var compounds: Int
  }

  struct Case: Decodable {
    var table: String
    var `where`: String
    var order: String
    var python: Int
    var sqlite: Int
  }

  struct Reference: Decodable {
    var columns: [String: [String]]
    var cases: [Case]
  }

  static var datasets: [Dataset] {
    [
      Dataset(table: "penguins", path: PublicData.penguinsCSV, format: "csv", atoms: 70, compounds: 15),
      Dataset(table: "raw", path: PublicData.penguinsRawCSV, format: "csv", atoms: 70, compounds: 15),
      Dataset(table: "cars", path: PublicData.vega("cars.json"), format: "json", atoms: 60, compounds: 15),
      Dataset(table: "wheat", path: PublicData.vega("wheat.json"), format: "json", atoms: 30, compounds: 10),
      Dataset(table: "riots", path: PublicData.vega("la-riots.csv"), format: "csv", atoms: 60, compounds: 15),
      Dataset(
        table: "airports", path: PublicData.vega("airports.csv"), format: "csv", atoms: 50, compounds: 10),
    ]
  }

  /// Runs the reference over the datasets with `seed`.
  static func reference(_ datasets: [Dataset], seed: UInt64) throws -> Reference {
    let files = try datasets.map { data -> [String: Any] in
      let path = try #require(data.path, PublicData.missingReason)
      return [
        "path": path, "format": data.format, "table": data.table, "atoms": data.atoms,
        "compounds": data.compounds,
      ]
    }
    let input = try JSONSerialization.data(withJSONObject: ["seed": seed % (1 << 52), "files": files])
    let result = try FolioRunner.execute(
      PublicData.python, ["-c", FilterReference.program], in: "/", input: input)
    try #require(result.status == 0, "the reference failed: \(result.stderr)")
    let output = Data(result.stdout.utf8)
    return try JSONDecoder().decode(Reference.self, from: output)
  }

  /// `folio.yaml` with each dataset twice: `T`, scanned, and `T_i`, with a
  /// secondary index on every column.
  static func yaml(_ reference: Reference) throws -> String {
    var text = "version: 1\ntables:\n"
    for (table, columns) in reference.columns.sorted(by: { $0.key < $1.key }) {
      let names = String(decoding: try JSONSerialization.data(withJSONObject: columns), as: UTF8.self)
      text += "  \(table):\n    path: data/\(table)\n"
      text += "  \(table)_i:\n    path: data/\(table)_i\n    indexes: \(names)\n"
    }
    return text
  }

  @Test func countsMatchSQLiteAndPythonOnPublicData() throws {
    let seed = testSeed()
    try reportingSeed(seed) {
      let datasets = Self.datasets
      let reference = try Self.reference(datasets, seed: seed)
      let scratch = try CLIScratch(yaml: try Self.yaml(reference))
      defer { scratch.remove() }
      #expect(try scratch.folio("init").status == 0)
      for data in datasets {
        for table in [data.table, data.table + "_i"] {
          let imported = try scratch.folio("import", table, try #require(data.path), "--format", data.format)
          try #require(imported.status == 0, "\(imported.stderr) (seed \(seed))")
        }
      }
      var generator = SplitMix(seed: seed)
      var checked = 0
      for item in reference.cases {
        #expect(item.python == item.sqlite, "the references disagree on \(item.where) (seed \(seed))")
        let expected = item.python
        // A seeded share through the binary: what a user types.
        if Int.random(in: 0..<8, using: &generator) == 0 {
          for arguments in [
            ["query", item.table, "--where", item.where, "--count"],
            ["query", item.table + "_i", "--where", item.where, "--count"],
            ["query", item.table + "_i", "--where", item.where, "--order-by-child", item.order, "--count"],
          ] {
            let result = try FolioRunner.run(arguments, in: scratch.path)
            #expect(result.status == 0, "\(arguments): \(result.stderr) (seed \(seed))")
            #expect(
              result.stdout == "\(expected)\n",
              "\(arguments.joined(separator: " ")): folio \(result.stdout), reference \(expected) (seed \(seed))"
            )
            #expect(result.stderr.isEmpty, "\(arguments): \(result.stderr) (seed \(seed))")
            checked += 1
          }
        }
      }
      // Every case through the Swift API: a scan, the secondary indexes,
      // the ordering's index, and `get` as well as `count`.
      let store = try Store(atPath: scratch.path)
      for item in reference.cases {
        let plain = try store.collection(item.table).query().where(item.where)
        let indexed = try store.collection(item.table + "_i").query().where(item.where)
        let ordered = try indexed.orderBy(child: item.order)
        let counts = [
          try plain.count(), try plain.get().count, try indexed.count(), try indexed.get().count,
          try ordered.count(), try ordered.get().count,
        ]
        #expect(
          counts.allSatisfy { $0 == item.python },
          "\(item.table): \(item.where): folio \(counts), reference \(item.python) (seed \(seed))")
      }
      #expect(checked > 30, "seed \(seed)")
    }
  }
}
