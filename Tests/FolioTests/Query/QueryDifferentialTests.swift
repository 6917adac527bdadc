import Foundation
import Testing

@testable import Folio

/// Random queries against a brute-force sort and filter of all documents.
struct QueryDifferentialTests {
  /// A random predicate and its meaning, written independently.
  struct RandomPredicate {
    var text: String
    var test: (JSONObject) -> Bool
  }

  static func literalText(_ value: JSONValue) -> String { value.compactString }

  static func predicate(_ fuzz: inout QueryFuzz, depth: Int = 0) -> RandomPredicate {
    let choice = depth > 1 ? fuzz.int(0...4) : fuzz.int(0...7)
    switch choice {
    case 0, 1, 2:
      let path = ["v", "n", "w", "missing"][fuzz.int(0...3)]
      let literal = fuzz.scalar()
      let op = ["==", "!=", "<", "<=", ">", ">="][fuzz.int(0...5)]
      return RandomPredicate(text: "\(path) \(op) \(literalText(literal))") { doc in
        let value = doc[path]
        switch op {
        case "==", "!=":
          var equal: Bool
          if Reference.rank(value) == Reference.rank(literal), Reference.rank(value) != 5 {
            equal = Reference.compare(value, literal) == 0
            if case .string(let a)? = value, case .string(let b) = literal {
              equal = Array(a.unicodeScalars) == Array(b.unicodeScalars)
            }
          } else {
            equal = false
          }
          return op == "==" ? equal : !equal
        case "<": return Reference.compare(value, literal) < 0
        case "<=": return Reference.compare(value, literal) <= 0
        case ">": return Reference.compare(value, literal) > 0
        default: return Reference.compare(value, literal) >= 0
        }
      }
    case 3:
      let tag = ["x", "y", "q"][fuzz.int(0...2)]
      return RandomPredicate(text: "tags contains \"\(tag)\"") { doc in
        doc["tags"]?.arrayValue?.contains(.string(tag)) ?? false
      }
    case 4:
      let set = (0..<fuzz.int(1...3)).map { _ in fuzz.int(0...9) }
      return RandomPredicate(text: "n in [\(set.map(String.init).joined(separator: ", "))]") { doc in
        set.contains(doc["n"]?.intValue ?? -1)
      }
    case 5:
      let inner = predicate(&fuzz, depth: depth + 1)
      return RandomPredicate(text: "!(\(inner.text))") { !inner.test($0) }
    case 6:
      let (a, b) = (predicate(&fuzz, depth: depth + 1), predicate(&fuzz, depth: depth + 1))
      return RandomPredicate(text: "(\(a.text)) && (\(b.text))") { a.test($0) && b.test($0) }
    default:
      let (a, b) = (predicate(&fuzz, depth: depth + 1), predicate(&fuzz, depth: depth + 1))
      let path = ["v", "tags"][fuzz.int(0...1)]
      // && binds tighter than ||.
      return RandomPredicate(text: "\(a.text) || exists(\(path)) && (\(b.text))") { doc in
        a.test(doc) || (doc[path] != nil && b.test(doc))
      }
    }
  }

  @Test func randomQueriesMatchBruteForce() throws {
    let seed = SeededGenerator.testSeed()
    var fuzz = QueryFuzz(rng: SeededGenerator(seed: seed))
    var total = 0
    for round in 0..<8 {
      let docs = fuzz.table(count: fuzz.int(0...40))
      let (store, scratch) = try makeFuzzStore(docs)
      defer { scratch.remove() }
      let collection = store.collection("t")
      for _ in 0..<250 {
        total += 1
        var query = collection.query()
        var description = ""
        let orderChoice = fuzz.int(0...4)
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
        if fuzz.chance(0.4) {
          let p = Self.predicate(&fuzz)
          query = try query.where(p.text)
          keep = { [keep] pk in keep(pk) && p.test(docs[pk]!) }
          description += "where(\(p.text)) "
        }
        var expected = Reference.sorted(docs, by: sortValue).filter(keep)
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
        if got != expected { return }
        #expect(try query.count() == expected.count, "seed \(seed) count: \(description)")
      }
    }
    #expect(total == 2000)
  }
}

extension Query {
  var hasEnd: Bool { end != nil }
}
