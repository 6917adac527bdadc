import Folio
import FolioCore
import FolioTestSupport
import Testing

struct FieldPathTests {
  @Test(arguments: [
    ("views", ["views"]), ("meta.color", ["meta", "color"]), ("a~1b", ["a.b"]), ("a~0b", ["a~b"]),
    ("x.~01.~1~0", ["x", "~1", ".~"]), ("", [""]), ("a..b", ["a", "", "b"]), ("é.ü", ["é", "ü"]),
  ])
  func parsesAndPrintsItsTextForm(_ text: String, _ segments: [String]) {
    let path = FieldPath(text)
    #expect(path.segments == segments)
    #expect(path.description == text)
    #expect(FieldPath(segments) == path)
  }
}
