import FolioCore
import FolioJSON

extension Query {
  /// A cursor that runs this query over documents from somewhere other than
  /// the table's files, such as a past commit's tree: `pks` lists every
  /// document, and `load` reads one (nil when it is gone). Ordering,
  /// bounds, cursors, limits and the filter work as in ``documents()``,
  /// with the same comparator; no index is used.
  ///
  /// A query in key order without a filter reads only the documents it
  /// returns. Any other reads each document once, to filter it and to
  /// sort it by its order value, and keeps them in memory.
  package func cursor(
    table: TableConfig, pks: [String], load: @escaping (String) throws -> JSONObject?
  ) throws -> QueryCursor {
    let plan = QueryPlan(self, table: table)
    var items: [(value: OrderValue, pk: String)] = []
    var preloaded: [ExactKey: JSONObject] = [:]
    if plan.ordering == .key && filter == nil {
      items = pks.map { (OrderValue(nil), $0) }
    } else {
      items.reserveCapacity(pks.count)
      for pk in pks {
        guard let object = try load(pk) else { continue }
        if let filter, !filter.matches(object) { continue }
        items.append((plan.orderValue(of: object), pk))
        preloaded[ExactKey(pk)] = object
      }
    }
    return QueryCursor(
      store: collection.store, table: table,
      range: MergedRange(runs: [ArrayRun(sorting: items)], lower: plan.lower, upper: plan.upper),
      limit: limit, filter: filter, preloaded: preloaded, source: load)
  }
}
