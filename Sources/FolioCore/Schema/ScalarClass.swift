/// A set of Unicode scalars one step of a ``LinearRegex`` may consume: a
/// literal, `.`, a class such as `[a-z\d]`, or an escape such as `\w` or
/// `\p{Letter}`.
struct ScalarClass: Sendable {
  /// A named set that is not a plain range list.
  enum Named: Sendable, Hashable {
    /// `\d`: ASCII digits.
    case digit
    /// `\w`: ASCII letters, digits and `_`.
    case word
    /// `\s`: ECMA-262's white space and line terminators.
    case space
    /// `.`: anything but a line terminator.
    case notLineTerminator
    /// `\p{…}` of a general category: a set of categories.
    case categories(Set<Unicode.GeneralCategory>)
    /// `\p{Any}`.
    case any
    /// `\p{ASCII}`.
    case ascii
    /// `\p{Alphabetic}`.
    case alphabetic
    /// `\p{White_Space}`.
    case whiteSpace

    func contains(_ scalar: Unicode.Scalar) -> Bool {
      switch self {
      case .digit: return scalar.value >= 0x30 && scalar.value <= 0x39
      case .word: return ScalarClass.isWord(scalar)
      case .space: return ScalarClass.isSpace(scalar)
      case .notLineTerminator: return !ScalarClass.isLineTerminator(scalar)
      case .categories(let set): return set.contains(scalar.properties.generalCategory)
      case .any: return true
      case .ascii: return scalar.isASCII
      case .alphabetic: return scalar.properties.isAlphabetic
      case .whiteSpace: return scalar.properties.isWhitespace
      }
    }
  }

  /// Closed ranges of scalar values.
  var ranges: [ClosedRange<UInt32>] = []
  /// Named sets, each in or (`\D`, `\P{…}`) out.
  var named: [(set: Named, negated: Bool)] = []
  /// `[^…]`: the complement of everything above.
  var negated = false

  /// One scalar.
  init(_ scalar: Unicode.Scalar) { ranges = [scalar.value...scalar.value] }
  /// A named set.
  init(_ set: Named, negated: Bool = false) { named = [(set, negated)] }
  /// An empty class, to add to.
  init() {}

  /// A class no scalar is in.
  static var nothing: ScalarClass { ScalarClass() }

  func contains(_ scalar: Unicode.Scalar) -> Bool {
    var found = false
    let value = scalar.value
    for range in ranges where range.contains(value) {
      found = true
      break
    }
    if !found {
      for (set, negated) in named where set.contains(scalar) != negated {
        found = true
        break
      }
    }
    return found != negated
  }

  static func isWord(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x5F: true
    default: false
    }
  }

  /// ECMA-262's WhiteSpace and LineTerminator.
  static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x09...0x0D, 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
      true
    default: false
    }
  }

  static func isLineTerminator(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x0A, 0x0D, 0x2028, 0x2029: true
    default: false
    }
  }

  /// The set `\p{name}` names: a general category by its short or long
  /// name (`L`, `Letter`, `gc=Lu`, `General_Category=Uppercase_Letter`),
  /// or `Any`, `ASCII`, `Alphabetic`, `White_Space`; nil for anything else.
  static func property(_ name: String) -> Named? {
    var name = name
    for prefix in ["General_Category=", "gc="] where name.hasPrefix(prefix) {
      name = String(name.dropFirst(prefix.count))
    }
    switch name {
    case "Any": return .any
    case "ASCII": return .ascii
    case "Alphabetic", "Alpha": return .alphabetic
    case "White_Space", "space": return .whiteSpace
    default: break
    }
    if let set = categories[name] { return .categories(set) }
    return nil
  }

  /// General categories by short and long name, and the groups (`L`, `N`…).
  private static let categories: [String: Set<Unicode.GeneralCategory>] = {
    let each: [(String, String, Unicode.GeneralCategory)] = [
      ("Lu", "Uppercase_Letter", .uppercaseLetter), ("Ll", "Lowercase_Letter", .lowercaseLetter),
      ("Lt", "Titlecase_Letter", .titlecaseLetter), ("Lm", "Modifier_Letter", .modifierLetter),
      ("Lo", "Other_Letter", .otherLetter), ("Mn", "Nonspacing_Mark", .nonspacingMark),
      ("Mc", "Spacing_Mark", .spacingMark), ("Me", "Enclosing_Mark", .enclosingMark),
      ("Nd", "Decimal_Number", .decimalNumber), ("Nl", "Letter_Number", .letterNumber),
      ("No", "Other_Number", .otherNumber), ("Pc", "Connector_Punctuation", .connectorPunctuation),
      ("Pd", "Dash_Punctuation", .dashPunctuation), ("Ps", "Open_Punctuation", .openPunctuation),
      ("Pe", "Close_Punctuation", .closePunctuation), ("Pi", "Initial_Punctuation", .initialPunctuation),
      ("Pf", "Final_Punctuation", .finalPunctuation), ("Po", "Other_Punctuation", .otherPunctuation),
      ("Sm", "Math_Symbol", .mathSymbol), ("Sc", "Currency_Symbol", .currencySymbol),
      ("Sk", "Modifier_Symbol", .modifierSymbol), ("So", "Other_Symbol", .otherSymbol),
      ("Zs", "Space_Separator", .spaceSeparator), ("Zl", "Line_Separator", .lineSeparator),
      ("Zp", "Paragraph_Separator", .paragraphSeparator), ("Cc", "Control", .control),
      ("Cf", "Format", .format), ("Cs", "Surrogate", .surrogate), ("Co", "Private_Use", .privateUse),
      ("Cn", "Unassigned", .unassigned),
    ]
    var table: [String: Set<Unicode.GeneralCategory>] = [:]
    for (short, long, category) in each {
      table[short] = [category]
      table[long] = [category]
      let group = String(short.prefix(1))
      table[group, default: []].insert(category)
    }
    let groups = [
      ("L", "Letter"), ("M", "Mark"), ("N", "Number"), ("P", "Punctuation"), ("S", "Symbol"),
      ("Z", "Separator"), ("C", "Other"),
    ]
    for (short, long) in groups { table[long] = table[short] }
    table["LC"] = [.uppercaseLetter, .lowercaseLetter, .titlecaseLetter]
    table["Cased_Letter"] = table["LC"]
    table["Combining_Mark"] = table["M"]
    table["digit"] = table["Nd"]
    table["punct"] = table["P"]
    return table
  }()
}
