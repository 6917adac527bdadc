import Folio
import FolioCore
import FolioTestSupport
import Foundation
import Testing

@testable import FolioQuery

/// Facet counts and descending cursors on the penguins of PyPI's
/// palmerpenguins (344 rows, `NA` where nothing was measured), checked
/// against counts made here from the CSV file itself.
struct FacetTests {
  static let yaml = """
    version: 1
    tables:
      penguins:
        path: data/penguins
        key: null
        order: [body_mass_g]
        indexes: [species, sex]
    """

  /// The store, and the CSV's rows as dictionaries of text (`NA` as nil).
  func penguins() throws -> (Store, Scratch, [[String: String?]]) {
    let path = try #require(PublicData.penguinsCSV, PublicData.missingReason)
    let (store, scratch) = try makeStore(yaml: Self.yaml)
    var options = ImportOptions(path: path)
    options.nullValues = ["NA"]
    _ = try store.importRows(into: "penguins", options: options)
    let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
      $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }
    let header = lines[0]
    let rows = lines.dropFirst().map { fields in
      Dictionary(uniqueKeysWithValues: zip(header, fields.map { $0 == "NA" ? nil : $0 }))
    }
    return (store, scratch, rows)
  }

  /// The reference: (value text, count) most common first, ties by text
  /// (the values compared here are strings, whose order is by text).
  static func reference(_ rows: [[String: String?]], _ column: String) -> (top: [String: Int], nulls: Int) {
    var counts: [String: Int] = [:]
    var nulls = 0
    for row in rows {
      if let value = row[column] ?? nil { counts[value, default: 0] += 1 } else { nulls += 1 }
    }
    return (counts, nulls)
  }

  @Test func anIndexedColumnIsCountedFromTheIndexWithNoDocumentRead() throws {
    let (store, scratch, rows) = try penguins()
    defer { scratch.remove() }
    QueryStatistics.enable()
    let folder = store.directory(of: try store.table(named: "penguins"))
    for column in ["species", "sex"] {
      _ = try store.collection("penguins").query().count()  // the index is built and checked
      let (read, packed) = (
        QueryStatistics.documentsRead(folder: folder), QueryStatistics.documentsPacked(folder: folder)
      )
      let counts = try store.collection("penguins").query().facets(of: FieldPath(column))
      #expect(counts.fromIndex)
      #expect(QueryStatistics.documentsRead(folder: folder) == read, "\(column)")
      #expect(QueryStatistics.documentsPacked(folder: folder) == packed, "\(column)")
      let (expected, nulls) = Self.reference(rows, column)
      #expect(counts.total == rows.count && counts.nulls == nulls, "\(column): \(counts)")
      #expect(counts.distinct == expected.count)
      let got = Dictionary(uniqueKeysWithValues: counts.values.map { ($0.value.stringValue!, $0.count) })
      #expect(got == expected, "\(column)")
      #expect(counts.values.map(\.count) == counts.values.map(\.count).sorted(by: >))
      // Read from the documents instead (a filter every one passes): the same.
      let read2 = try store.collection("penguins").query().where("true || false").facets(
        of: FieldPath(column))
      #expect(!read2.fromIndex && read2.values == counts.values && read2.nulls == counts.nulls)
    }
  }

  @Test func aFilterNarrowsTheCountsAndTheLimitKeepsTheMostCommon() throws {
    let (store, scratch, rows) = try penguins()
    defer { scratch.remove() }
    let heavy = rows.filter { row in
      (row["body_mass_g"] ?? nil).flatMap(Double.init).map { $0 > 4000 } ?? false
    }
    let counts = try store.collection("penguins").query().where("body_mass_g > 4000").facets(of: "island")
    let (expected, nulls) = Self.reference(heavy, "island")
    #expect(!counts.fromIndex && counts.total == heavy.count && counts.nulls == nulls)
    #expect(
      Dictionary(uniqueKeysWithValues: counts.values.map { ($0.value.stringValue!, $0.count) }) == expected)
    // Numbers, most common first, ties in numeric order, cut at the limit.
    let masses = try store.collection("penguins").query().facets(of: "body_mass_g", limit: 4)
    let (all, _) = Self.reference(rows, "body_mass_g")
    let best = all.map { (Double($0.key)!, $0.value) }.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
    #expect(masses.values.map { Double($0.value.numberText!)! } == best.prefix(4).map(\.0))
    #expect(masses.values.map(\.count) == best.prefix(4).map(\.1))
    #expect(masses.distinct == all.count && masses.fromIndex)
  }

  @Test func aReversedCursorGivesTheOrderBackwards() throws {
    let (store, scratch, _) = try penguins()
    defer { scratch.remove() }
    let table = store.collection("penguins")
    for query in [
      table.query(), try table.query().orderByKey(), try table.query().orderBy(child: "bill_length_mm"),
      try table.query().where("species == \"Gentoo\""),
      try table.query().orderBy(child: "island").where("sex == \"male\""),
    ] {
      let forward = try query.get().map(\.pk)
      var cursor = try query.documents()
      try cursor.reverse()
      var backward: [String] = []
      while let document = try cursor.next() { backward.append(document.pk) }
      #expect(backward == forward.reversed(), "\(query)")
      #expect(!forward.isEmpty)
    }
    var limited = try table.query().limitToFirst(3).documents()
    #expect(throws: FolioError.self) { try limited.reverse() }
  }
}
