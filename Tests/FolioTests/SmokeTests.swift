import Testing
@testable import Folio

@Test func jsonLiteral() {
  let v: JSONValue = ["a": 1]
  #expect(v["a"]?.intValue == 1)
}
