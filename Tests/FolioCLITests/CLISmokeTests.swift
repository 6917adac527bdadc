import Testing
@testable import Folio

@Test func cliPlaceholder() {
  let v: JSONValue = ["a": 1]
  #expect(v["a"]?.intValue == 1)
}
