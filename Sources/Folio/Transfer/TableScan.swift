/// Walks a table's documents in order, for export.
///
/// A stopgap kept apart on purpose: once ordered queries land (issue 3),
/// export should read through the query API and its persistent order-key
/// indexes instead. Until then this lists the table folder and sorts by the
/// rules of DESIGN.md "Ordering": by pk (pks that look like 32-bit integers
/// first, numerically, then the rest by UTF-16 code units), or by a child
/// value (null < false < true < numbers < strings < arrays/objects), ties
/// by pk. Ordering by a child reads each document twice, once for its value.
struct TableScan {
  /// How to order.
  enum Order: Equatable {
    case key
    case child(String)
  }

  var store: Store
  var table: TableConfig
  var order: Order
  var startAt: JSONValue?
  var endAt: JSONValue?
  var limitToFirst: Int?
  var limitToLast: Int?

  /// The pks to visit, in order.
  func orderedPKs() throws -> [String] {
    let names = try FileSystem.list(store.directory(of: table)) ?? []
    var pks = names.compactMap { name in
      name.hasPrefix(".") ? nil : PrimaryKey.pk(fromFileName: name)
    }
    switch order {
    case .key:
      pks.sort(by: TableScan.pkPrecedes)
      if startAt != nil || endAt != nil {
        pks = pks.filter { pk in
          let value = JSONValue.string(pk)
          if let startAt, TableScan.compare(value, startAt) < 0 { return false }
          if let endAt, TableScan.compare(value, endAt) > 0 { return false }
          return true
        }
      }
    case .child(let column):
      var keyed: [(value: JSONValue, pk: String)] = []
      keyed.reserveCapacity(pks.count)
      for pk in pks {
        guard let document = try store.readDocument(at: try store.documentPath(table: table, pk: pk)) else {
          continue
        }
        let value = TableScan.sortValue(document.object[column])
        if let startAt, TableScan.compare(value, startAt) < 0 { continue }
        if let endAt, TableScan.compare(value, endAt) > 0 { continue }
        keyed.append((value, pk))
      }
      keyed.sort { a, b in
        let order = TableScan.compare(a.value, b.value)
        return order != 0 ? order < 0 : TableScan.pkPrecedes(a.pk, b.pk)
      }
      pks = keyed.map(\.pk)
    }
    if let limitToFirst { pks = Array(pks.prefix(limitToFirst)) }
    if let limitToLast { pks = Array(pks.suffix(limitToLast)) }
    return pks
  }

  /// Containers all sort alike, so only a marker is kept for them.
  private static func sortValue(_ value: JSONValue?) -> JSONValue {
    switch value {
    case nil: .null
    case .array?, .object?: .array([])
    case let value?: value
    }
  }

  private static func rank(_ value: JSONValue) -> Int {
    switch value {
    case .null: 0
    case .bool(false): 1
    case .bool(true): 2
    case .number: 3
    case .string: 4
    case .array, .object: 5
    }
  }

  /// -1, 0 or 1 by DESIGN.md's value order.
  static func compare(_ a: JSONValue, _ b: JSONValue) -> Int {
    let (ra, rb) = (rank(a), rank(b))
    if ra != rb { return ra < rb ? -1 : 1 }
    switch (a, b) {
    case (.number(let x), .number(let y)):
      let (dx, dy) = (Double(x) ?? 0, Double(y) ?? 0)
      return dx < dy ? -1 : dx > dy ? 1 : 0
    case (.string(let x), .string(let y)):
      if x.utf16.elementsEqual(y.utf16) { return 0 }
      return x.utf16.lexicographicallyPrecedes(y.utf16) ? -1 : 1
    default: return 0
    }
  }

  /// Pk order: 32-bit-integer-looking pks first, numerically, then the rest
  /// by UTF-16 code units.
  static func pkPrecedes(_ a: String, _ b: String) -> Bool {
    let (ia, ib) = (int32(a), int32(b))
    switch (ia, ib) {
    case (let x?, let y?): return x < y
    case (.some, nil): return true
    case (nil, .some): return false
    case (nil, nil): return a.utf16.lexicographicallyPrecedes(b.utf16)
    }
  }

  private static func int32(_ text: String) -> Int32? {
    guard let value = Int32(text), String(value) == text else { return nil }
    return value
  }
}
