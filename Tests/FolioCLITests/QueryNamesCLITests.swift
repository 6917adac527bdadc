import FolioTestSupport
import Foundation
import Testing

/// Names in a query: a field no document has is named with the nearest
/// one that documents have, a bare word where a value belongs is refused,
/// and backticks name a field with a space or a dot, on the penguins of
/// PyPI's palmerpenguins.
struct QueryNamesCLITests {
  func penguins() throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: nil)
    #expect(try scratch.folio("init").status == 0)
    for (table, file) in [("penguins", PublicData.penguinsCSV), ("raw", PublicData.penguinsRawCSV)] {
      let path = try #require(file, PublicData.missingReason)
      let imported = try scratch.folio("import", table, path, "--create")
      try #require(imported.status == 0, "\(imported.stderr)")
    }
    return scratch
  }

  @Test func aMisspelledFieldIsNamedWithTheNearestAndStrictMakesItAnError() throws {
    let scratch = try penguins()
    defer { scratch.remove() }
    let typo = try scratch.folio("query", "penguins", "--where", "bill_lenght_mm > 50", "--count")
    #expect(typo.status == 0)
    #expect(typo.stdout == "0\n")
    #expect(
      typo.stderr
        == "warning: --where: no document of table 'penguins' has a field 'bill_lenght_mm'; did you mean 'bill_length_mm'? (--strict makes this an error)\n"
    )
    let strict = try scratch.folio("query", "penguins", "--where", "bill_lenght_mm > 50", "--strict")
    #expect(strict.status == 64)
    #expect(strict.stdout.isEmpty)
    #expect(
      strict.stderr.hasPrefix(
        "error: --where: no document of table 'penguins' has a field 'bill_lenght_mm'; did you mean 'bill_length_mm'?\nUsage: folio query"
      ), "\(strict.stderr)")
    // Each place a query names a field is checked; a name far from every
    // field gets no guess.
    let order = try scratch.folio("query", "penguins", "--order-by-child", "flipper_len", "--count")
    #expect(order.status == 0 && order.stdout == "344\n")
    #expect(
      order.stderr.contains(
        "warning: --order-by-child: no document of table 'penguins' has a field 'flipper_len'"))
    let select = try scratch.folio(
      "query", "penguins", "--select", "species,islands", "--limit-to-first", "1")
    #expect(select.stdout == #"{"species":"Adelie"}"# + "\n")
    #expect(select.stderr.contains("'islands'; did you mean 'island'?"), "\(select.stderr)")
    let far = try scratch.folio("query", "penguins", "--where", "exists(wingspan)", "--count")
    #expect(
      far.stderr
        == "warning: --where: no document of table 'penguins' has a field 'wingspan' (--strict makes this an error)\n"
    )
    // A field that is there, even where it is null or "NA", is no warning.
    let fine = try scratch.folio("query", "penguins", "--where", #"sex == "NA""#, "--strict", "--count")
    #expect(fine.status == 0 && fine.stdout == "11\n" && fine.stderr.isEmpty, "\(fine.stderr)")
  }

  @Test func aBareWordWhereAValueBelongsSaysToQuoteIt() throws {
    let scratch = try penguins()
    defer { scratch.remove() }
    let bare = try scratch.folio("query", "penguins", "--where", "sex == male")
    #expect(bare.status == 64)
    #expect(bare.stdout.isEmpty)
    #expect(
      bare.stderr.hasPrefix(
        """
        error: --where:1:8: 'male' after '==' is a bare word: quote text as "male", or write a field on the right in backticks, `male`
          sex == male
                 ^
        """), "\(bare.stderr)")
    let single = try scratch.folio("query", "penguins", "--where", "sex == 'male'")
    #expect(single.status == 64)
    #expect(
      single.stderr.hasPrefix(#"error: --where:1:8: strings take double quotes, as in JSON: write "male""#))
    let quoted = try scratch.folio("query", "penguins", "--where", #"sex == "male""#, "--count")
    #expect(quoted.status == 0 && quoted.stdout == "168\n" && quoted.stderr.isEmpty)
  }

  @Test func backticksNameAFieldWithSpacesInEveryOption() throws {
    let scratch = try penguins()
    defer { scratch.remove() }
    let path = try #require(PublicData.penguinsRawCSV)
    let script = """
      import csv, sys
      rows = list(csv.DictReader(open(sys.argv[1], newline='')))
      print(sum(1 for r in rows if r['Culmen Length (mm)'] not in ('', 'NA') and float(r['Culmen Length (mm)']) > 50))
      """
    let expected = try FolioRunner.execute(PublicData.python, ["-c", script, path], in: "/").stdout
    let count = try scratch.folio(
      "query", "raw", "--where", "`Culmen Length (mm)` > 50", "--count", "--strict")
    #expect(count.status == 0 && count.stderr.isEmpty, "\(count.stderr)")
    #expect(count.stdout == expected)
    let longest = try scratch.folio(
      "query", "raw", "--order-by-child", "`Culmen Length (mm)`", "--where", "`Culmen Length (mm)` >= 0",
      "--limit-to-last", "1", "--strict", "--select", "`Individual ID`,`Culmen Length (mm)`")
    #expect(longest.status == 0 && longest.stderr.isEmpty, "\(longest.stderr)")
    #expect(longest.stdout == #"{"Culmen Length (mm)":59.6,"Individual ID":"N56A2"}"# + "\n")
    let table = try scratch.folio(
      "query", "raw", "--where", "`Culmen Length (mm)` > 59", "--select",
      "`Individual ID`,`Culmen Length (mm)`",
      "--format", "table")
    #expect(table.stdout.hasPrefix("Individual ID  Culmen Length (mm)\nN56A2"), "\(table.stdout)")
    let unterminated = try scratch.folio("query", "raw", "--select", "`Individual ID")
    #expect(unterminated.status == 64)
    #expect(
      unterminated.stderr.hasPrefix("error: --select:1:1: unterminated `quoted` segment"),
      "\(unterminated.stderr)")
  }
}
