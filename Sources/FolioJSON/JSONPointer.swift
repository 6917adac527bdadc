/// A JSON Pointer (RFC 6901): the path to a value inside a JSON text, one
/// reference token per step. A token steps into an object by key or into an
/// array by index, as the value it meets says.
///
/// ```swift
/// let pointer = JSONPointer(["tags", "0"])
/// pointer.description        // "/tags/0"
/// JSONPointer(fragment: "#/$defs/a~1b")?.tokens  // ["$defs", "a/b"]
/// ```
public struct JSONPointer: Hashable, Sendable, CustomStringConvertible {
  /// The reference tokens, unescaped.
  public var tokens: [String]

  /// The pointer with these tokens.
  public init(_ tokens: [String] = []) { self.tokens = tokens }

  /// The pointer one step further down.
  public func appending(_ token: String) -> JSONPointer { JSONPointer(tokens + [token]) }

  /// The pointer one step further down, into an array.
  public func appending(index: Int) -> JSONPointer { appending(String(index)) }

  /// The RFC 6901 text: `""` for the whole value, else `/` before each
  /// token, with `~` written `~0` and `/` written `~1`.
  public var description: String {
    tokens.map { "/" + $0.replacing("~", with: "~0").replacing("/", with: "~1") }.joined()
  }

  /// The URI fragment form, as `$ref` and error messages write it: `#`
  /// followed by the pointer, with bytes outside the fragment's safe set
  /// percent-encoded.
  public var fragment: String {
    var text = "#"
    for byte in description.utf8 {
      if Self.fragmentSafe(byte) {
        text.unicodeScalars.append(Unicode.Scalar(byte))
      } else {
        text += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
      }
    }
    return text
  }

  /// Parses a URI fragment that holds a pointer (`#`, `#/a/b`, `#/a%20b`);
  /// nil for anything else (a plain-name fragment such as `#foo`, a bad
  /// escape, invalid UTF-8).
  public init?(fragment: String) {
    guard fragment.hasPrefix("#") else { return nil }
    var bytes: [UInt8] = []
    var utf8 = Array(fragment.utf8.dropFirst())[...]
    while let byte = utf8.popFirst() {
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      guard utf8.count >= 2, let high = Self.hexValue(utf8.popFirst()!),
        let low = Self.hexValue(utf8.popFirst()!)
      else { return nil }
      bytes.append(high << 4 | low)
    }
    guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
    self.init(pointer: text)
  }

  /// Parses the RFC 6901 text form; nil if it is not one.
  public init?(pointer text: String) {
    if text.isEmpty {
      self.init()
      return
    }
    guard text.hasPrefix("/") else { return nil }
    var tokens: [String] = []
    for raw in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
      var token = ""
      var escaped = false
      for character in raw {
        if escaped {
          switch character {
          case "0": token.append("~")
          case "1": token.append("/")
          default: return nil
          }
          escaped = false
        } else if character == "~" {
          escaped = true
        } else {
          token.append(character)
        }
      }
      if escaped { return nil }
      tokens.append(token)
    }
    self.init(tokens)
  }

  /// The value this pointer names inside `value`, if there is one.
  public func resolve(in value: JSONValue) -> JSONValue? {
    var current = value
    for token in tokens {
      switch current {
      case .object(let object):
        guard let next = object[token] else { return nil }
        current = next
      case .array(let array):
        guard let index = Self.arrayIndex(token), index < array.count else { return nil }
        current = array[index]
      default:
        return nil
      }
    }
    return current
  }

  /// An RFC 6901 array index: `0`, or digits without a leading zero.
  static func arrayIndex(_ token: String) -> Int? {
    guard !token.isEmpty, token.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
      token == "0" || !token.hasPrefix("0")
    else { return nil }
    return Int(token)
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 48...57: byte - 48
    case 65...70: byte - 55
    case 97...102: byte - 87
    default: nil
    }
  }

  /// RFC 3986 `fragment` characters that need no escape.
  private static func fragmentSafe(_ byte: UInt8) -> Bool {
    switch byte {
    case 65...90, 97...122, 48...57: true
    case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"),
      UInt8(ascii: "$"), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "!"), UInt8(ascii: "'"),
      UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","),
      UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: "?"):
      true
    default: false
    }
  }
}
