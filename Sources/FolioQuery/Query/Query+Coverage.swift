import FolioCore
import FolioJSON

extension Query {
  /// Whether the document `pk` with `document` falls inside this query's
  /// filter and range (limits aside): what a query subscription covers.
  package func covers(pk: String, document: JSONObject, table: TableConfig) -> Bool {
    let plan = QueryPlan(self, table: table)
    return plan.covers(pk: pk, value: plan.orderValue(of: document), document: document)
  }
}
