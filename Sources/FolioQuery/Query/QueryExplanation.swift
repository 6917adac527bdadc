/// How a query will run: which index it reads, over which range, and how
/// many documents that means (``Query/explain()``, `folio query --explain`).
public struct QueryExplanation: Sendable, CustomStringConvertible {
  /// The indexed path whose index is read; nil for a full scan or the pk
  /// order.
  public var index: String?
  /// Whether ``index`` is a secondary index (listed under `indexes`, not
  /// `order`).
  public var secondary: Bool = false
  /// Whether the filter narrowed the index range.
  public var narrowedByFilter: Bool
  /// Whether the documents read are sorted afterwards, because the index
  /// read is not the one of the ordering.
  public var sortedAfterwards: Bool = false
  /// Documents that will be read (the range's entries; for a scan, all).
  public var documentsToRead: Int
  /// Whether every document is read to order by a path with no index.
  public var fullScan: Bool

  /// Creates an explanation.
  public init(index: String?, narrowedByFilter: Bool, documentsToRead: Int, fullScan: Bool) {
    self.index = index
    self.narrowedByFilter = narrowedByFilter
    self.documentsToRead = documentsToRead
    self.fullScan = fullScan
  }

  /// One line, as `folio query --explain` prints it.
  ///
  /// ```
  /// index on dep_delay, range narrowed by the filter; reads 610 documents
  /// secondary index on carrier, range narrowed by the filter, then sorted; reads 58665 documents
  /// full scan: no index on the order path; reads 336776 documents
  /// ```
  public var description: String {
    if fullScan { return "full scan: no index on the order path; reads \(documentsToRead) documents" }
    let source = index.map { "\(secondary ? "secondary " : "")index on \($0)" } ?? "pk order"
    let range = narrowedByFilter ? ", range narrowed by the filter" : ""
    let sorted = sortedAfterwards ? ", then sorted" : ""
    return "\(source)\(range)\(sorted); reads \(documentsToRead) documents"
  }
}
