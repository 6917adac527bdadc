import FolioJSON

/// Firebase's rules for the keys a write may carry, applied to every key
/// of every body (PUT, PATCH and POST) at any depth, and to each segment of
/// a PATCH path, before anything is written.
///
/// A key is 1 to ``maxKeyBytes`` bytes of UTF-8 without `.`, `$`, `#`,
/// `[`, `]`, `/` or an ASCII control character, and no value lies deeper
/// than ``maxDepth`` keys below the root (Firebase's "Limits": a key of
/// 768 bytes, 32 levels of children). The one key with a dot is the server
/// value sentinel `.sv`, alone in its object.
///
/// The URL's own segments are not held to these rules: a path addresses
/// what a store holds, and a document written by an editor or imported may
/// have a pk or a column Firebase would refuse (`a.b`, or `size/cm` sent as
/// `size%2Fcm`). The depth limit counts them all the same.
enum RESTKeys {
  /// The longest key, in bytes of UTF-8.
  static let maxKeyBytes = 768
  /// The deepest a value may lie below the root, in keys.
  static let maxDepth = 32

  /// Checks one key; `location` is the path it sits under, for the message.
  static func check(key: String, under location: [String]) throws(RESTError) {
    if key.isEmpty {
      throw RESTError(400, "Invalid key: an empty key under \(describe(location)); keys cannot be empty")
    }
    if key.utf8.count > maxKeyBytes {
      throw RESTError(
        400,
        "Invalid key under \(describe(location)): \(key.utf8.count) bytes, longer than the limit of \(maxKeyBytes)"
      )
    }
    for byte in key.utf8 where isRefused(byte) {
      throw RESTError(
        400,
        "Invalid key \(quoted(key)) under \(describe(location)): keys cannot contain \".\", \"$\", \"#\", \"[\", \"]\", \"/\" or ASCII control characters"
      )
    }
  }

  /// Checks every key in `value`, which is written at `location`, and the
  /// depth of everything in it.
  static func check(_ value: JSONValue, at location: [String]) throws(RESTError) {
    try checkDepth(location.count, at: location)
    var path = location
    try walk(value, path: &path)
  }

  /// The segments of a PATCH member's path, each held to the key rules. A
  /// leading or trailing `/` is allowed; an empty path, or an empty segment
  /// inside one, names no child and is refused.
  static func patchSegments(_ text: String, under location: [String]) throws(RESTError) -> [String] {
    var trimmed = Substring(text)
    while trimmed.hasPrefix("/") { trimmed = trimmed.dropFirst() }
    while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard !trimmed.isEmpty else {
      throw RESTError(
        400,
        "PATCH paths name a child under \(describe(location)), and \(quoted(text)) names none; to replace the value at the path, use PUT"
      )
    }
    let segments = trimmed.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    for segment in segments where segment.isEmpty {
      throw RESTError(400, "PATCH path \(quoted(text)) has an empty segment")
    }
    var under = location
    for segment in segments {
      try check(key: segment, under: under)
      under.append(segment)
    }
    return segments
  }

  /// `value` without Firebase's priorities, which Folio does not keep: a
  /// `.priority` member is dropped at any depth, and `{".value": v}` (with
  /// or without `.priority` beside it, the form the SDKs send a primitive
  /// with a priority in) is `v`.
  /// - Throws: 400 for `.value` beside any other member, as Firebase.
  static func withoutPriorities(_ value: JSONValue) throws(RESTError) -> JSONValue {
    switch value {
    case .object(let object):
      guard
        object[".priority"] != nil || object[".value"] != nil
          || object.contains(where: { $0.value.isComposite })
      else { return value }
      if let wrapped = object[".value"] {
        guard object.allSatisfy({ $0.key == ".value" || $0.key == ".priority" }) else {
          throw RESTError(400, "Invalid data; .value must be the only child besides .priority")
        }
        return try withoutPriorities(wrapped)
      }
      var members: [(String, JSONValue)] = []
      for (key, member) in object where key != ".priority" {
        members.append((key, try withoutPriorities(member)))
      }
      return .object(JSONObject(members))
    case .array(let elements):
      var out: [JSONValue] = []
      out.reserveCapacity(elements.count)
      for element in elements { out.append(try withoutPriorities(element)) }
      return .array(out)
    default:
      return value
    }
  }

  private static func walk(_ value: JSONValue, path: inout [String]) throws(RESTError) {
    switch value {
    case .object(let object):
      // A server value is checked by ``ServerValues``.
      if object.count == 1, object[".sv"] != nil { return }
      if !object.isEmpty { try checkDepth(path.count + 1, at: path) }
      for (key, member) in object {
        try check(key: key, under: path)
        path.append(key)
        try walk(member, path: &path)
        path.removeLast()
      }
    case .array(let elements):
      if !elements.isEmpty { try checkDepth(path.count + 1, at: path) }
      for (index, element) in elements.enumerated() {
        path.append(String(index))
        try walk(element, path: &path)
        path.removeLast()
      }
    default:
      return
    }
  }

  private static func checkDepth(_ depth: Int, at path: [String]) throws(RESTError) {
    if depth > maxDepth {
      throw RESTError(
        400,
        "a value under \(describe(Array(path.prefix(4)))) lies \(depth) keys deep, deeper than the limit of \(maxDepth)"
      )
    }
  }

  private static func isRefused(_ byte: UInt8) -> Bool {
    switch byte {
    case 0..<0x20, 0x7F: true
    case UInt8(ascii: "."), UInt8(ascii: "$"), UInt8(ascii: "#"), UInt8(ascii: "["), UInt8(ascii: "]"),
      UInt8(ascii: "/"):
      true
    default: false
    }
  }

  private static func describe(_ location: [String]) -> String {
    "/" + location.joined(separator: "/")
  }

  /// The key as JSON text, so that control characters show as escapes.
  private static func quoted(_ key: String) -> String {
    JSONValue.string(key).compactString
  }
}

extension JSONValue {
  /// Whether this is an object or an array.
  fileprivate var isComposite: Bool {
    switch self {
    case .object, .array: true
    default: false
    }
  }
}
