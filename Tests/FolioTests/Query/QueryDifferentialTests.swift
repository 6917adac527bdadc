import Folio
import FolioJSON
import FolioTestSupport
import Foundation
import Testing

@testable import FolioQuery

/// Random queries against a brute-force sort and filter of all documents.
struct QueryDifferentialTests {
  /// A random predicate and its meaning, written independently.
  struct RandomPredicate {
    var text: String
    var test: (JSONObject) -> Bool
    /// The features it uses: "dotted", "string contains", "array contains", "exists".
    var kinds: Set<String> = []
  }

  static func literalText(_ value: JSONValue) -> String { value.compactString }

  /// The value at a dotted path: each segment steps into an object.
  static func at(_ doc: JSONObject, _ path: String) -> JSONValue? {
    var current: JSONValue? = .object(doc)
    for segment in path.split(separator: ".") {
      guard case .object(let object)? = current else { return nil }
      current = object[String(segment)]
    }
    return current
  }

  /// `==` on scalars: same type rank and equal; strings scalar by scalar.
  static func equal(_ value: JSONValue?, _ literal: JSONValue) -> Bool {
    guard Reference.rank(value) == Reference.rank(literal), Reference.rank(value) != 5 else { return false }
    if case .string(let a)? = value, case .string(let b) = literal {
      return Array(a.unicodeScalars) == Array(b.unicodeScalars)
    }
    return Reference.compare(value, literal) == 0
  }

  /// Whether `part`'s UTF-8 bytes occur in `text`'s, by brute force.
  static func bytesContain(_ text: String, _ part: String) -> Bool {
    let (t, p) = (Array(text.utf8), Array(part.utf8))
    if p.isEmpty { return true }
    guard t.count >= p.count else { return false }
    return (0...(t.count - p.count)).contains { Array(t[$0..<($0 + p.count)]) == p }
  }

  static func comparison(_ path: String, _ fuzz: inout QueryFuzz) -> RandomPredicate {
    let literal = fuzz.scalar()
    let op = ["==", "!=", "<", "<=", ">", ">="][fuzz.int(0...5)]
    return RandomPredicate(text: "\(path) \(op) \(literalText(literal))") { doc in
      let value = at(doc, path)
      switch op {
      case "==": return equal(value, literal)
      case "!=": return !equal(value, literal)
      default: break
      }
      // An ordering comparison holds only within one kind (numbers,
      // strings, booleans): never for null, a missing value, a composite,
      // or two kinds.
      switch (value, literal) {
      case (.number?, .number), (.string?, .string), (.bool?, .bool): break
      default: return false
      }
      switch op {
      case "<": return Reference.compare(value, literal) < 0
      case "<=": return Reference.compare(value, literal) <= 0
      case ">": return Reference.compare(value, literal) > 0
      default: return Reference.compare(value, literal) >= 0
      }
    }
  }

  static func predicate(_ fuzz: inout QueryFuzz, depth: Int = 0) -> RandomPredicate {
    let choice = depth > 1 ? fuzz.int(0...8) : fuzz.int(0...11)
    switch choice {
    case 0, 1, 2:
      return comparison(["v", "n", "w", "missing"][fuzz.int(0...3)], &fuzz)
    case 3:
      let tag = ["x", "y", "q"][fuzz.int(0...2)]
      return RandomPredicate(text: "tags contains \"\(tag)\"") { doc in
        doc["tags"]?.arrayValue?.contains(.string(tag)) ?? false
      }
    case 4:
      if fuzz.chance(0.5) {
        // Mixed types: `w` is a secondary index in half the rounds.
        let set = (0..<fuzz.int(1...3)).map { _ in fuzz.scalar() }
        return RandomPredicate(text: "w in [\(set.map(literalText).joined(separator: ", "))]") { doc in
          set.contains { equal(doc["w"], $0) }
        }
      }
      let set = (0..<fuzz.int(1...3)).map { _ in fuzz.int(0...9) }
      return RandomPredicate(text: "n in [\(set.map(String.init).joined(separator: ", "))]") { doc in
        set.contains(doc["n"]?.intValue ?? -1)
      }
    case 5:
      var p = comparison(["o.a.b", "o.c", "o.a", "o.a.b.z"][fuzz.int(0...3)], &fuzz)
      p.kinds = ["dotted"]
      return p
    case 6:
      let path = ["s", "o.c"][fuzz.int(0...1)]
      let part = QueryFuzz.words[fuzz.int(0...QueryFuzz.words.count - 1)]
      return RandomPredicate(
        text: "\(path) contains \(literalText(.string(part)))",
        test: { doc in
          guard case .string(let text)? = at(doc, path) else { return false }
          return bytesContain(text, part)
        }, kinds: path.contains(".") ? ["string contains", "dotted"] : ["string contains"])
    case 7:
      let literal = fuzz.chance(0.5) ? fuzz.scalar() : .string(["x", "y", "z"][fuzz.int(0...2)])
      return RandomPredicate(
        text: "tags contains \(literalText(literal))",
        test: { doc in
          guard case .array(let elements)? = doc["tags"] else { return false }
          return elements.contains { equal($0, literal) }
        }, kinds: ["array contains"])
    case 8:
      let path = ["o", "o.a", "o.a.b", "o.c", "s", "tags", "missing", "o.missing"][fuzz.int(0...7)]
      return RandomPredicate(
        text: "exists(\(path))", test: { at($0, path) != nil },
        kinds: path.contains(".") ? ["exists", "dotted"] : ["exists"])
    case 9:
      let inner = predicate(&fuzz, depth: depth + 1)
      return RandomPredicate(text: "!(\(inner.text))", test: { !inner.test($0) }, kinds: inner.kinds)
    case 10:
      let (a, b) = (predicate(&fuzz, depth: depth + 1), predicate(&fuzz, depth: depth + 1))
      return RandomPredicate(
        text: "(\(a.text)) && (\(b.text))", test: { a.test($0) && b.test($0) }, kinds: a.kinds.union(b.kinds))
    default:
      let (a, b) = (predicate(&fuzz, depth: depth + 1), predicate(&fuzz, depth: depth + 1))
      let path = ["v", "tags", "o.a"][fuzz.int(0...2)]
      // && binds tighter than ||.
      return RandomPredicate(
        text: "\(a.text) || exists(\(path)) && (\(b.text))",
        test: { doc in a.test(doc) || (at(doc, path) != nil && b.test(doc)) },
        kinds: a.kinds.union(b.kinds).union(["exists"]))
    }
  }

  @Test func randomQueriesMatchBruteForce() throws {
    let seed = SeededGenerator.testSeed()
    var fuzz = QueryFuzz(rng: SeededGenerator(seed: seed))
    try reportingSeed(seed) {
      // How often each predicate feature kept some documents and dropped
      // others, and how often each ordering returned documents: a generator
      // that stopped reaching them would pass vacuously.
      var discriminating: [String: Int] = [:]
      var ordered: [Int: Int] = [:]
      // How often the planner read another index than the ordering's, with
      // and without secondary indexes.
      var planned: [Int: Int] = [:]
      for round in 0..<8 {
        let docs = fuzz.table(count: fuzz.int(0...40))
        // Odd rounds index `w` and `o.c` as well: orderings by them run on
        // those indexes, and filters on them pick candidates from their
        // ranges, for every other ordering too.
        let (store, scratch) = try makeFuzzStore(docs, indexes: round % 2 == 1 ? ["w", "o.c"] : [])
        defer { scratch.remove() }
        let collection = store.collection("t")
        for _ in 0..<250 {
          var query = collection.query()
          var description = ""
          let orderChoice = fuzz.int(0...6)
          let sortValue: (String, JSONObject) -> JSONValue?
          switch orderChoice {
          case 0:
            query = try query.orderByKey()
            sortValue = { _, _ in nil }
            description += "orderByKey "
          case 1:
            query = try query.orderByValue()
            sortValue = { _, _ in .object([:]) }
            description += "orderByValue "
          case 2:
            query = try query.orderBy(child: "n")
            sortValue = { $1["n"] }
            description += "n "
          case 3:
            query = try query.orderBy(child: "w")
            sortValue = { $1["w"] }
            description += "w "
          case 4:
            // A dotted path that is an order key: through its index.
            query = try query.orderBy(child: "o.a.b")
            sortValue = { Self.at($1, "o.a.b") }
            description += "o.a.b "
          case 5:
            // A dotted path that is not: by scan.
            query = try query.orderBy(child: "o.c")
            sortValue = { Self.at($1, "o.c") }
            description += "o.c "
          default:
            sortValue = { $1["v"] }
            description += "v(default) "
          }
          let isKey = orderChoice == 0
          func position(_ pk: String) -> (JSONValue?, String) { (sortValue(pk, docs[pk]!), pk) }
          func bound() -> (JSONValue, String?) {
            if isKey { return (.string(fuzz.pk()), nil) }
            return (fuzz.scalar(), fuzz.chance(0.5) ? fuzz.pk() : nil)
          }
          // Position of (value, pk) against bound point; nil key means ±infinity.
          func comparePoint(_ pk: String, _ bound: (JSONValue, String?), keyDefault: Int) -> Int {
            if isKey { return Reference.comparePK(pk, bound.0.stringValue!) }
            let c = Reference.compare(position(pk).0, bound.0)
            if c != 0 { return c }
            guard let key = bound.1 else { return keyDefault }
            return Reference.comparePK(pk, key)
          }
          var keep: (String) -> Bool = { _ in true }
          switch fuzz.int(0...3) {
          case 0:
            let b = bound()
            query = try query.startAt(b.0, key: b.1)
            keep = { [keep] pk in keep(pk) && comparePoint(pk, b, keyDefault: 1) >= 0 }
            description += "startAt(\(b)) "
          case 1:
            let b = bound()
            query = try query.startAfter(b.0, key: b.1)
            keep = { [keep] pk in keep(pk) && comparePoint(pk, b, keyDefault: -1) > 0 }
            description += "startAfter(\(b)) "
          case 2:
            let b = bound()
            query = try query.equalTo(b.0, key: b.1)
            keep = { [keep] pk in
              keep(pk) && comparePoint(pk, b, keyDefault: 1) >= 0 && comparePoint(pk, b, keyDefault: -1) <= 0
            }
            description += "equalTo(\(b)) "
          default: break
          }
          if !query.hasEnd {
            switch fuzz.int(0...2) {
            case 0:
              let b = bound()
              query = try query.endAt(b.0, key: b.1)
              keep = { [keep] pk in keep(pk) && comparePoint(pk, b, keyDefault: -1) <= 0 }
              description += "endAt(\(b)) "
            case 1:
              let b = bound()
              query = try query.endBefore(b.0, key: b.1)
              keep = { [keep] pk in keep(pk) && comparePoint(pk, b, keyDefault: 1) < 0 }
              description += "endBefore(\(b)) "
            default: break
            }
          }
          let unfiltered = Reference.sorted(docs, by: sortValue).filter(keep)
          var kinds: Set<String> = []
          if fuzz.chance(0.5) {
            let p = Self.predicate(&fuzz)
            query = try query.where(p.text)
            keep = { [keep] pk in keep(pk) && p.test(docs[pk]!) }
            description += "where(\(p.text)) "
            kinds = p.kinds
          }
          var expected = Reference.sorted(docs, by: sortValue).filter(keep)
          // A filter that kept some documents and dropped others.
          if !expected.isEmpty && expected.count < unfiltered.count {
            for kind in kinds { discriminating[kind, default: 0] += 1 }
          }
          if !expected.isEmpty { ordered[orderChoice, default: 0] += 1 }
          switch fuzz.int(0...2) {
          case 0:
            let n = fuzz.int(1...10)
            query = try query.limitToFirst(n)
            expected = Array(expected.prefix(n))
            description += "limitToFirst(\(n))"
          case 1:
            let n = fuzz.int(1...10)
            query = try query.limitToLast(n)
            expected = Array(expected.suffix(n))
            description += "limitToLast(\(n))"
          default: break
          }
          let got = try query.get().map(\.pk)
          #expect(got == expected, "seed \(seed) round \(round): \(description)")
          if try query.explain().sortedAfterwards { planned[round % 2, default: 0] += 1 }
          if got != expected { return }
          // The planner only narrows what is read: the same answer without it.
          var unplanned = query
          unplanned.usesFilterBounds = false
          #expect(try unplanned.get().map(\.pk) == got, "seed \(seed) unplanned: \(description)")
          #expect(try query.count() == expected.count, "seed \(seed) count: \(description)")
        }
      }
      for kind in ["dotted", "string contains", "array contains", "exists"] {
        #expect(
          discriminating[kind, default: 0] >= 5,
          "seed \(seed): \(kind) filtered only \(discriminating[kind, default: 0]) times")
      }
      for kind in 0...1 {
        #expect(
          planned[kind, default: 0] >= 10,
          "seed \(seed): filters picked another index only \(planned[kind, default: 0]) times (secondary: \(kind))"
        )
      }
      for choice in 0...6 {
        #expect(
          ordered[choice, default: 0] >= 20,
          "seed \(seed): ordering \(choice) returned documents \(ordered[choice, default: 0]) times")
      }
    }
  }
}

extension Query {
  var hasEnd: Bool { end != nil }
}
