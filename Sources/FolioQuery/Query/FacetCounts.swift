import FolioCore
import FolioJSON

/// How often each value of one path occurs among a query's documents: the
/// most common values first, as a data browser shows them beside a column.
///
/// From ``Query/facets(of:limit:)``. Values are told apart as a filter
/// compares them: `1` and `1.0` are one value, strings by their bytes, and
/// arrays and objects by their compact JSON text. A document whose path is
/// missing or `null` counts in ``nulls``, not among ``values``.
public struct FacetCounts: Sendable, Equatable {
  /// One value and how many documents hold it.
  public struct Value: Sendable, Equatable {
    /// The value, as the first document counted holds it.
    public var value: JSONValue
    /// How many documents hold it.
    public var count: Int
  }

  /// The path counted.
  public var path: FieldPath
  /// The most common values, most common first; ties in value order
  /// (``ValueOrdering``).
  public var values: [Value]
  /// How many different values there are, `null` aside.
  public var distinct: Int
  /// How many documents have no value at the path, or `null`.
  public var nulls: Int
  /// How many documents were counted: those the query matches.
  public var total: Int
  /// Whether the counts came from the table's index alone, with no document
  /// read: the path is indexed (`order` or `indexes` in `folio.yaml`) and
  /// the query has no filter, range or limit.
  public var fromIndex: Bool
}
