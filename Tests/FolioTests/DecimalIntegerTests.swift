import Folio
import FolioCore
import FolioTestSupport
import Testing

struct DecimalIntegerTests {
  @Test(arguments: [
    ("0", "0", "0"),
    ("999999999", "1", "1000000000"),
    ("-1000000000", "1", "-999999999"),
    ("123456789012345678901234567890", "-123456789012345678901234567890", "0"),
    ("-5", "3", "-2"),
    ("5", "-8", "-3"),
    ("-0", "0", "0"),
    ("0007", "1", "8"),
    ("99999999999999999999999", "1", "100000000000000000000000"),
    ("-99999999999999999999999", "-1", "-100000000000000000000000"),
  ])
  func addition(_ a: String, _ b: String, _ sum: String) throws {
    let x = try #require(DecimalInteger(a))
    let y = try #require(DecimalInteger(b))
    #expect((x + y).description == sum)
    #expect((y + x).description == sum)
  }

  @Test(arguments: ["", "-", "+1", "1.0", "1e3", " 1", "abc", "--1"])
  func rejects(_ text: String) {
    #expect(DecimalInteger(text) == nil)
  }

  @Test func int32Range() {
    #expect(DecimalInteger("2147483647")?.int32Value == Int32.max)
    #expect(DecimalInteger("2147483648")?.int32Value == nil)
    #expect(DecimalInteger("-2147483648")?.int32Value == Int32.min)
    #expect(DecimalInteger("-2147483649")?.int32Value == nil)
  }

  @Test func randomAgreesWithInt64() throws {
    let seed = JSONRandom.seed()
    var generator = JSONRandom(seed: seed)
    for _ in 0..<5000 {
      let a = Int64.random(in: -(1 << 61)...(1 << 61), using: &generator)
      let b = Int64.random(in: -(1 << 61)...(1 << 61), using: &generator)
      let (x, y) = (
        try #require(DecimalInteger(String(a)), "seed \(seed): \(a)"),
        try #require(DecimalInteger(String(b)), "seed \(seed): \(b)")
      )
      #expect((x + y).description == String(a + b), "seed \(seed): \(a) + \(b)")
      #expect((x < y) == (a < b), "seed \(seed): \(a) < \(b)")
    }
  }
}
