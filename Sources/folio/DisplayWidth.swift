/// How many terminal columns text takes, for `--format table`: East Asian
/// Wide and Fullwidth characters and emoji take 2, combining marks and
/// other zero-width scalars 0, everything else 1 (the rules of wcwidth(3)
/// and Unicode's EastAsianWidth.txt, by block ranges rather than the full
/// table).
enum DisplayWidth {
  /// The columns of one grapheme cluster: its widest scalar, since marks,
  /// joiners and variation selectors ride on the base; 2 for an emoji shown
  /// as a picture (by default, or asked for with U+FE0F).
  static func of(_ character: Character) -> Int {
    let scalars = character.unicodeScalars
    if scalars.contains(where: { $0.value == 0xFE0F || $0.properties.isEmojiPresentation }) { return 2 }
    return scalars.reduce(0) { max($0, of($1)) }
  }

  /// The columns of one scalar on its own.
  static func of(_ scalar: Unicode.Scalar) -> Int {
    let value = scalar.value
    if value < 0x20 || (0x7F..<0xA0).contains(value) { return 0 }
    if value < 0x300 { return 1 }
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: return 0
    default: break
    }
    // Hangul medial vowels and final consonants join the syllable before.
    if (0x1160...0x11FF).contains(value) || (0xD7B0...0xD7FF).contains(value) { return 0 }
    return wide.contains { $0.contains(value) } ? 2 : 1
  }

  /// East Asian Wide (W) and Fullwidth (F) blocks.
  private static let wide: [ClosedRange<UInt32>] = [
    0x1100...0x115F,  // Hangul Jamo initial consonants
    0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0...0x23F0, 0x23F3...0x23F3,
    0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F...0x267F, 0x2693...0x2693,
    0x26A1...0x26A1, 0x26AA...0x26AB, 0x26BD...0x26BE, 0x26C4...0x26C5, 0x26CE...0x26CE,
    0x26D4...0x26D4, 0x26EA...0x26EA, 0x26F2...0x26F5, 0x26FA...0x26FD, 0x2705...0x2705,
    0x270A...0x270B, 0x2728...0x2728, 0x274C...0x274C, 0x2753...0x2755, 0x2757...0x2757,
    0x2795...0x2797, 0x27B0...0x27B0, 0x27BF...0x27BF, 0x2B1B...0x2B1C, 0x2B50...0x2B50,
    0x2B55...0x2B55,
    0x2E80...0x303E,  // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
    0x3041...0x33FF,  // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun, CJK compatibility
    0x3400...0x4DBF,  // CJK extension A
    0x4E00...0x9FFF,  // CJK unified ideographs
    0xA000...0xA4CF,  // Yi
    0xA960...0xA97F,  // Hangul Jamo extended A
    0xAC00...0xD7A3,  // Hangul syllables
    0xF900...0xFAFF,  // CJK compatibility ideographs
    0xFE10...0xFE19,  // vertical forms
    0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
    0xFF00...0xFF60,  // fullwidth forms
    0xFFE0...0xFFE6,  // fullwidth signs
    0x16FE0...0x16FE4, 0x17000...0x18CFF,  // Tangut, Khitan
    0x1AFF0...0x1B2FF,  // Kana supplement and extensions, Nushu
    0x1F004...0x1F004, 0x1F0CF...0x1F0CF, 0x1F18E...0x1F18E, 0x1F191...0x1F19A,
    0x1F200...0x1F251, 0x1F260...0x1F265,  // enclosed ideographic supplement
    0x1F300...0x1F64F,  // pictographs and emoticons (those without emoji presentation too)
    0x1F680...0x1F6FF, 0x1F7E0...0x1F7EB, 0x1F90C...0x1F9FF, 0x1FA70...0x1FAFF,
    0x20000...0x2FFFD, 0x30000...0x3FFFD,  // CJK extensions B and after
  ]
}

extension String {
  /// The terminal columns the text takes (see ``DisplayWidth``).
  var displayWidth: Int { reduce(0) { $0 + DisplayWidth.of($1) } }

  /// The longest prefix that fits in `columns` terminal columns.
  func prefix(columns: Int) -> String {
    var used = 0
    var result = ""
    for character in self {
      let width = DisplayWidth.of(character)
      if used + width > columns { break }
      used += width
      result.append(character)
    }
    return result
  }

  /// The text followed by spaces up to `columns` terminal columns.
  func padding(columns: Int) -> String {
    let width = displayWidth
    return width >= columns ? self : self + String(repeating: " ", count: columns - width)
  }
}
