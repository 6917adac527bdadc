import Folio
import FolioJSON
import FolioTestSupport
import Foundation

/// Random JSON values and texts for the randomized JSON tests, from a seed
/// that a failure prints and `FOLIO_TEST_SEED` replays.
struct JSONRandom: RandomNumberGenerator {
  private var state: UInt64

  /// The seed from `FOLIO_TEST_SEED`, or a fresh one.
  static func seed() -> UInt64 {
    if let text = ProcessInfo.processInfo.environment["FOLIO_TEST_SEED"], let seed = UInt64(text) {
      return seed
    }
    return UInt64.random(in: 0...UInt64.max)
  }

  init(seed: UInt64) { state = seed }

  /// SplitMix64: small, fast, and good enough to drive test data.
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
  mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }

  /// A random value, nested at most `depth` levels.
  mutating func value(depth: Int = 4) -> JSONValue {
    switch int(0...(depth > 0 ? 9 : 5)) {
    case 0: return .null
    case 1: return .bool(chance(50))
    case 2, 3: return .number(numberLiteral())
    case 4, 5: return .string(string())
    case 6, 7:
      return .array((0..<int(0...5)).map { _ in value(depth: depth - 1) })
    default:
      var object = JSONObject()
      for _ in 0..<int(0...6) { object[string()] = value(depth: depth - 1) }
      return .object(object)
    }
  }

  /// A random number literal from the RFC 8259 grammar.
  mutating func numberLiteral() -> String {
    var text = chance(30) ? "-" : ""
    if chance(20) {
      text += "0"
    } else {
      text += String(int(1...9))
      for _ in 0..<int(0...(chance(10) ? 30 : 4)) { text += String(int(0...9)) }
    }
    if chance(30) {
      text += "."
      for _ in 0..<int(1...6) { text += String(int(0...9)) }
    }
    if chance(20) {
      text += chance(50) ? "e" : "E"
      text += ["", "+", "-"][int(0...2)]
      for _ in 0..<int(1...4) { text += String(int(0...9)) }
    }
    return text
  }

  /// A random string that reaches the awkward corners: controls, quotes,
  /// backslashes, DEL, combining marks, U+2028, U+FFFF, astral scalars.
  mutating func string() -> String {
    var scalars = String.UnicodeScalarView()
    for _ in 0..<int(0...(chance(10) ? 40 : 10)) {
      let value: UInt32
      switch int(0...11) {
      case 0: value = UInt32(int(0...0x1F))
      case 1: value = [0x22, 0x5C, 0x2F, 0x7F][int(0...3)]
      case 2: value = UInt32(int(0x80...0x7FF))
      case 3: value = UInt32([0x301, 0x2028, 0x2029, 0xFEFF, 0xFFFD, 0xFFFF][int(0...5)])
      case 4: value = UInt32(int(0xE000...0xFFFF))
      case 5: value = UInt32(int(0x800...0xD7FF))
      case 6: value = UInt32(int(0x10000...0x10FFFF))
      case 7: value = UInt32(int(0x1F600...0x1F64F))
      default: value = UInt32(int(0x20...0x7E))
      }
      scalars.append(Unicode.Scalar(value)!)
    }
    return String(scalars)
  }

  /// `value` as JSON text written the way a person or another program might:
  /// random whitespace, members in random order, characters escaped or not
  /// at random.
  mutating func sloppyText(_ value: JSONValue) -> String {
    var out = ""
    writeSloppy(value, into: &out)
    return space() + out + space()
  }

  private mutating func space() -> String {
    guard chance(40) else { return "" }
    return String(
      (0..<int(1...3)).map { _ in [" ", "\t", "\n", "\r\n", "\r"][int(0...4)] }.joined())
  }

  private mutating func writeSloppy(_ value: JSONValue, into out: inout String) {
    switch value {
    case .null: out += "null"
    case .bool(let flag): out += flag ? "true" : "false"
    case .number(let text): out += text
    case .string(let text): writeSloppyString(text, into: &out)
    case .array(let elements):
      out += "[" + space()
      for (n, element) in elements.enumerated() {
        if n > 0 { out += space() + "," + space() }
        writeSloppy(element, into: &out)
      }
      out += space() + "]"
    case .object(let object):
      out += "{" + space()
      for (n, member) in object.members.shuffled(using: &self).enumerated() {
        if n > 0 { out += space() + "," + space() }
        writeSloppyString(member.key, into: &out)
        out += space() + ":" + space()
        writeSloppy(member.value, into: &out)
      }
      out += space() + "}"
    }
  }

  private mutating func writeSloppyString(_ text: String, into out: inout String) {
    out += "\""
    for scalar in text.unicodeScalars {
      let v = scalar.value
      let mustEscape = v < 0x20 || v == 0x22 || v == 0x5C
      if !mustEscape && !chance(15) {
        out.unicodeScalars.append(scalar)
        continue
      }
      let short: [UInt32: String] = [
        0x22: "\\\"", 0x5C: "\\\\", 0x2F: "\\/", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n",
        0x0D: "\\r", 0x09: "\\t",
      ]
      if let short = short[v], chance(70) {
        out += short
      } else if v >= 0x10000 {
        let u = v - 0x10000
        out += unicodeEscape(0xD800 + (u >> 10)) + unicodeEscape(0xDC00 + (u & 0x3FF))
      } else {
        out += unicodeEscape(v)
      }
    }
    out += "\""
  }

  private mutating func unicodeEscape(_ unit: UInt32) -> String {
    let hex = String(unit, radix: 16, uppercase: chance(50))
    return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
  }
}
