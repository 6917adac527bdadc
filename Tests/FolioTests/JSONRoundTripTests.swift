import Folio
import FolioJSON
import FolioSystem
import FolioTestSupport
import Testing

/// Randomized round trips. Each test prints its seed when it fails; set
/// `FOLIO_TEST_SEED` to replay it.
@Suite struct JSONRoundTripTests {
  @Test func canonicalFormRoundTrips() throws {
    let seed = JSONRandom.seed()
    var random = JSONRandom(seed: seed)
    for n in 0..<500 {
      let value = random.value()
      let canonical = value.canonicalBytes()
      let parsed = try #require(
        try? JSONValue(parsing: canonical), "seed \(seed), case \(n): canonical form does not parse"
      )
      try #require(parsed == value, "seed \(seed), case \(n): parse(canonical(x)) != x")
      try #require(
        parsed.canonicalBytes() == canonical,
        "seed \(seed), case \(n): canonical form is not a fixed point")
      try #require(parsed.hashValue == value.hashValue, "seed \(seed), case \(n): hash differs")
      // The parser keeps members in the order read, so this checks the
      // writer's key order against a plain byte comparison.
      try #require(keysAreInByteOrder(parsed), "seed \(seed), case \(n): keys out of order")
    }
  }

  @Test func sortsManyKeysThatShareLongPrefixes() throws {
    let seed = JSONRandom.seed()
    var random = JSONRandom(seed: seed)
    for n in 0..<200 {
      var object = JSONObject()
      for _ in 0..<random.int(0...40) {
        // Keys around the eight-byte prefix the writer sorts on first.
        let key =
          String(repeating: "k", count: random.int(5...9))
          + (random.chance(50) ? random.string() : "")
        object[key] = .integer(n)
      }
      let parsed = try #require(
        try? JSONValue(parsing: JSONValue.object(object).canonicalBytes()),
        "seed \(seed), case \(n): canonical form does not parse")
      try #require(parsed == .object(object), "seed \(seed), case \(n)")
      try #require(keysAreInByteOrder(parsed), "seed \(seed), case \(n): keys out of order")
    }
  }

  /// Whether every object in `value` has its keys in strictly increasing
  /// UTF-8 byte order.
  private func keysAreInByteOrder(_ value: JSONValue) -> Bool {
    switch value {
    case .array(let elements):
      return elements.allSatisfy(keysAreInByteOrder)
    case .object(let object):
      let keys = object.keys.map { Array($0.utf8) }
      return zip(keys, keys.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) }
        && object.members.allSatisfy { keysAreInByteOrder($0.value) }
    default:
      return true
    }
  }

  @Test func compactFormRoundTrips() throws {
    let seed = JSONRandom.seed()
    var random = JSONRandom(seed: seed)
    for n in 0..<500 {
      let value = random.value()
      let compact = value.compactBytes()
      try #require(!compact.contains(0x0A), "seed \(seed), case \(n): compact form has a newline")
      let parsed = try #require(
        try? JSONValue(parsing: compact), "seed \(seed), case \(n): compact form does not parse")
      try #require(parsed == value, "seed \(seed), case \(n): parse(compact(x)) != x")
      try #require(
        parsed.compactBytes() == compact,
        "seed \(seed), case \(n): compact form is not a fixed point")
    }
  }

  @Test func parsesTextWrittenAnyWhichWay() throws {
    // Random whitespace, member order and escapes must all read back as the
    // same value.
    let seed = JSONRandom.seed()
    var random = JSONRandom(seed: seed)
    for n in 0..<500 {
      let value = random.value()
      let text = random.sloppyText(value)
      let parsed: JSONValue
      do {
        parsed = try JSONValue(parsing: text)
      } catch {
        Issue.record("seed \(seed), case \(n): \(error) in \(text.debugDescription)")
        return
      }
      try #require(parsed == value, "seed \(seed), case \(n): \(text.debugDescription)")
      try #require(parsed.canonicalBytes() == value.canonicalBytes(), "seed \(seed), case \(n)")
    }
  }

  @Test func survivesCorruptedInput() throws {
    // Damaged text either parses to something that round-trips, or fails
    // with a located INVALID_JSON error: never a crash, never another error.
    let seed = JSONRandom.seed()
    var random = JSONRandom(seed: seed)
    for n in 0..<2000 {
      var bytes = random.value().canonicalBytes()
      for _ in 0..<random.int(1...3) {
        let at = random.int(0...bytes.count - 1)
        switch random.int(0...2) {
        case 0: bytes[at] = UInt8(random.int(0...255))
        case 1: bytes.remove(at: at)
        default:
          bytes.insert(
            Array(#"{}[],:"\-0eE.tfn/ "#.utf8 + [0x80, 0xC3, 0xFF])[random.int(0...19)], at: at)
        }
        if bytes.isEmpty { break }
      }
      do {
        let value = try JSONValue(parsing: bytes)
        try #require(
          try JSONValue(parsing: value.canonicalBytes()) == value, "seed \(seed), case \(n)")
      } catch let error as FolioError {
        try #require(error.code == .invalidJSON, "seed \(seed), case \(n): \(error)")
        let location = try #require(error.location, "seed \(seed), case \(n)")
        let lines = bytes.filter { $0 == 0x0A || $0 == 0x0D }.count + 1
        try #require(
          location.line >= 1 && location.line <= lines && location.column >= 1
            && location.column <= bytes.count + 1,
          "seed \(seed), case \(n): bad location \(location)")
      } catch let failure as ExpectationFailedError {
        throw failure
      } catch {
        Issue.record("seed \(seed), case \(n): not a FolioError: \(error)")
        return
      }
    }
  }
}
