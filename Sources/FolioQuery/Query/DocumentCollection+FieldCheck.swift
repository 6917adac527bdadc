import FolioCore
import FolioJSON
import FolioSystem

/// A field a query names that no document of its table holds: most often a
/// typo, which would otherwise give an empty answer in silence.
///
/// ```swift
/// for unknown in try flights.unknownFields(["dep_dealy"]) {
///   print(unknown)  // no document of table 'flights' has a field 'dep_dealy'; did you mean 'dep_delay'?
/// }
/// ```
public struct UnknownField: Sendable, Hashable, CustomStringConvertible {
  /// The table.
  public var table: String
  /// The path no document holds.
  public var path: FieldPath
  /// The nearest field that documents do hold, when one is near enough to
  /// be a likely meaning.
  public var suggestion: FieldPath?

  /// Creates a report.
  public init(table: String, path: FieldPath, suggestion: FieldPath?) {
    self.table = table
    self.path = path
    self.suggestion = suggestion
  }

  /// `no document of table 'T' has a field 'P'`, and `; did you mean 'Q'?`
  /// when there is a suggestion. Paths are written as the command line
  /// takes them: a segment with a dot or a space in backticks.
  public var description: String {
    var text = "no document of table '\(table)' has a field '\(path.commandLineText)'"
    if let suggestion { text += "; did you mean '\(suggestion.commandLineText)'?" }
    return text
  }
}

extension FieldPath {
  /// The path as ``init(parsing:source:)`` reads it back: plain segments
  /// joined by dots, and a segment that is not a plain name in backticks.
  public var commandLineText: String {
    segments.map { segment in
      let plain =
        !segment.isEmpty
        && segment.unicodeScalars.allSatisfy {
          $0 == "_" || $0 == "-" || $0 == "$" || ($0.value > 0x7F && $0.properties.isAlphabetic)
            || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
        }
      return plain ? segment : "`\(segment)`"
    }.joined(separator: ".")
  }
}

extension DocumentCollection {
  /// How many documents ``unknownFields(_:)`` reads for the names it
  /// suggests from.
  static let fieldSampleSize = 500

  /// The paths of `paths` that no document of this table holds, each with
  /// the nearest field documents do hold. An empty table reports nothing:
  /// every name would be unknown, and that says nothing about a typo.
  ///
  /// A path is looked for with an `exists(path)` query that stops at the
  /// first document holding it, so a common field costs one document, and
  /// only a field that is truly absent costs a pass over the table (which
  /// the query naming it was going to make anyway). The table's key column
  /// is always known.
  /// - Throws: `UNKNOWN_TABLE`; what reading a document throws.
  public func unknownFields(_ paths: [FieldPath]) throws -> [UnknownField] {
    let table = try store.table(named: name)
    var seen = Set<FieldPath>()
    var unknown: [FieldPath] = []
    for path in paths where seen.insert(path).inserted {
      if path.segments.count == 1 && path.column == table.rowKey() { continue }
      let holding = try query().orderByKey().where(.exists(path)).limitToFirst(1).get()
      if holding.isEmpty { unknown.append(path) }
    }
    guard !unknown.isEmpty else { return [] }
    let sample = try query().orderByKey().limitToFirst(Self.fieldSampleSize).get()
    guard !sample.isEmpty else { return [] }
    return unknown.map { path in
      UnknownField(
        table: name, path: path, suggestion: Self.nearest(to: path, in: sample, key: table.rowKey()))
    }
  }

  /// The field of `sample` nearest to `path`: among the names found where
  /// `path`'s last segment would be (the top level, or inside the objects
  /// at its parent), the one fewest edits away, if close enough to be a
  /// likely typo (``NearestName``).
  static func nearest(to path: FieldPath, in sample: [Document], key: String) -> FieldPath? {
    let parent = path.segments.dropLast()
    var names = Set<String>()
    if parent.isEmpty { names.insert(key) }
    for document in sample {
      let container: JSONObject?
      if parent.isEmpty {
        container = document.value
      } else if case .object(let object)? = document.value.childValue(at: FieldPath(Array(parent))) {
        container = object
      } else {
        container = nil
      }
      for member in container ?? [:] { names.insert(member.key) }
      if names.count > 10_000 { break }
    }
    return NearestName.nearest(to: path.segments.last!, among: names).map { FieldPath(Array(parent) + [$0]) }
  }
}

extension Predicate {
  /// Every path the predicate reads, in the order they are written.
  public var paths: [FieldPath] {
    var found: [FieldPath] = []
    func add(_ operand: Operand) {
      if case .path(let path) = operand { found.append(path) }
    }
    var terms = [self]
    while let term = terms.popLast() {
      switch term {
      case .compare(let a, _, let b):
        add(a)
        add(b)
      case .exists(let path): found.append(path)
      // Pushed right first, so the left side is read first.
      case .and(let a, let b), .or(let a, let b): terms += [b, a]
      case .not(let a): terms.append(a)
      case .isTrue(let a): add(a)
      }
    }
    return found
  }
}
