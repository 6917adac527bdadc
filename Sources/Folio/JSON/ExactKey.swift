/// A string that hashes and compares by its exact UTF-8 bytes, for use as a
/// dictionary or set key where JSON object keys are looked up.
///
/// A plain `String` key would merge "é" (U+00E9) and "e\u{301}", which JSON
/// treats as two different keys.
struct ExactKey: Hashable, Sendable {
  /// The key.
  let string: String

  /// Wraps `string`.
  init(_ string: String) { self.string = string }

  static func == (lhs: ExactKey, rhs: ExactKey) -> Bool {
    lhs.string.utf8Equals(rhs.string)
  }

  func hash(into hasher: inout Hasher) {
    string.hashUTF8(into: &hasher)
  }
}
