import FolioCore
import FolioJSON
import FolioSystem

/// An ordered query over one table, built by chaining calls on
/// ``DocumentCollection/query()`` (as in Firebase). Each call returns a new
/// query; the original is unchanged.
///
/// ```swift
/// let page = try flights.query()
///     .orderBy(child: "dep_delay")
///     .startAfter(last.value, key: last.pk)   // the previous page's last document
///     .limitToFirst(20)
///     .get()
/// ```
///
/// - **Ordering**: one of ``orderBy(child:)-(FieldPath)``, ``orderByKey()`` and
///   ``orderByValue()``. Without one, the table's first `order` key from
///   `folio.yaml` is used, or the key if it has none. Documents sort by the
///   rules of ``ValueOrdering``; ties are broken by pk, so the order is
///   total and a cursor `(value, pk)` names one exact position.
/// - **Range**: ``startAt(_:key:)-(JSONValue,_)`` and ``endAt(_:key:)-(JSONValue,_)`` are inclusive,
///   ``startAfter(_:key:)-(JSONValue,_)`` and ``endBefore(_:key:)-(JSONValue,_)`` exclusive, and
///   ``equalTo(_:key:)-(JSONValue,_)`` is `startAt` plus `endAt`. Without `key`, a bound
///   covers every pk at that value. Paging with `startAfter(lastValue, key:
///   lastPK)` never skips or repeats a document, however many share a value.
/// - **Limit**: ``limitToFirst(_:)`` or ``limitToLast(_:)``, applied after
///   the range and the filter. Results always come back in ascending order.
/// - **Filter**: ``where(_:)-(String)`` (see ``Predicate``).
///
/// Mistakes throw `INVALID_QUERY` at once, naming the mistake: two
/// orderings, two starts, two ends, two limits, a limit below 1, or a `key:`
/// cursor with ``orderByKey()``. Any JSON value may bound a range, objects and
/// arrays included, and sorts by ``ValueOrdering``.
///
/// When the ordering is the key, the value, or a path listed under `order`
/// or `indexes` in `folio.yaml`, the query runs on a persistent index and a
/// limited query reads only the documents it returns. Any other path is
/// ordered by reading every document. A filter whose `&&` terms bound an
/// indexed path (`==`, `<`, `<=`, `>`, `>=`, `in`) reads only that index's
/// range when it is the smaller read (see ``explain()``).
///
/// **Edits behind Folio's back.** Before each query the index is checked
/// against the files, so an editor's save (in place or by rename), `cp`,
/// `git checkout`/`pull`, a delete or a new file shows up in the next query.
/// How much that check costs:
/// - the first query in a process takes a stat of every document file
///   (about 0.75 s for 300k) and reads those whose stat data changed;
/// - later queries in the same process re-read only the files that inotify
///   reported changed since (a lost event, or the folder moved or replaced,
///   means one more full check);
/// - a fresh process skips the full check when another process on the store
///   runs an ``IndexPublisher`` (`store.publishIndexes()`) and answers that
///   the index files describe the folder now; otherwise it takes the full
///   check. See ``IndexPublisher`` for the exact rule. A program that calls
///   ``Store/startIndexDaemonOnDemand(executable:)`` (the `folio` CLI does)
///   then also starts an index daemon for a large table, so that the next
///   fresh process skips it.
///
/// Folders on network or user-space file systems (NFS, SMB, FUSE) get no
/// watch: every query there takes the full check.
public struct Query: Sendable {
  /// The table.
  public let collection: DocumentCollection
  private(set) var ordering: Ordering?
  private(set) var start: Bound?
  private(set) var end: Bound?
  private(set) var limit: Limit?
  package private(set) var filter: Predicate?
  /// Whether the planner may use the filter to pick an index range (off
  /// only to compare planned and unplanned results in tests).
  var usesFilterBounds = true

  /// What a query orders by.
  public enum Ordering: Sendable, Hashable, CustomStringConvertible {
    /// The value at a path inside each document.
    case child(FieldPath)
    /// The pk.
    case key
    /// The whole document.
    case value

    /// The call that chose it, for messages.
    public var description: String {
      switch self {
      case .child(let path): "orderBy(child: \"\(path)\")"
      case .key: "orderByKey()"
      case .value: "orderByValue()"
      }
    }
  }

  /// One end of the range.
  struct Bound: Sendable, Hashable {
    var value: JSONValue
    var key: String?
    var inclusive: Bool
    /// The call that set it, for messages.
    var call: String
  }

  /// How many documents, from which end.
  enum Limit: Sendable, Hashable {
    case first(Int)
    case last(Int)
  }

  init(collection: DocumentCollection) {
    self.collection = collection
  }

  // MARK: Ordering

  /// Orders by the value at `path` (dotted: `"meta.updated"`).
  public func orderBy(child path: String) throws -> Query {
    try ordered(.child(Query.childPath(path)))
  }

  /// Orders by the value at `path`.
  public func orderBy(child path: FieldPath) throws -> Query {
    try ordered(.child(path))
  }

  /// Orders by pk. Range values are then pks, and `key:` may not be given.
  public func orderByKey() throws -> Query {
    try ordered(.key)
  }

  /// Orders by the whole document. Documents are objects, which all compare
  /// equal, so this sorts by pk, and a scalar range value bounds everything
  /// or nothing.
  public func orderByValue() throws -> Query {
    try ordered(.value)
  }

  private func ordered(_ new: Ordering) throws -> Query {
    if let ordering {
      throw Query.mistake("\(new) after \(ordering): a query has one ordering")
    }
    if new == .key {
      for bound in [start, end].compactMap({ $0 }) where bound.key != nil {
        throw Query.mistake(
          "orderByKey() with a key: cursor in \(bound.call); with orderByKey the value is the pk, so drop key:"
        )
      }
      for bound in [start, end].compactMap({ $0 }) {
        _ = try Query.pkBound(bound.value, call: bound.call)
      }
    }
    var copy = self
    copy.ordering = new
    return copy
  }

  // MARK: Range

  /// Starts at `value` (inclusive); with `key`, at that pk among the
  /// documents with that value.
  public func startAt(_ value: JSONValue, key: String? = nil) throws -> Query {
    try starting(Bound(value: value, key: key, inclusive: true, call: "startAt"))
  }

  /// Starts just after `value` (exclusive); with `key`, just after that pk
  /// among the documents with that value. Give the last document of a page
  /// to get the next page.
  public func startAfter(_ value: JSONValue, key: String? = nil) throws -> Query {
    try starting(Bound(value: value, key: key, inclusive: false, call: "startAfter"))
  }

  /// Ends at `value` (inclusive); with `key`, at that pk among the documents
  /// with that value.
  public func endAt(_ value: JSONValue, key: String? = nil) throws -> Query {
    try ending(Bound(value: value, key: key, inclusive: true, call: "endAt"))
  }

  /// Ends just before `value` (exclusive); with `key`, just before that pk
  /// among the documents with that value. Give the first document of a page
  /// and ``limitToLast(_:)`` to get the page before.
  public func endBefore(_ value: JSONValue, key: String? = nil) throws -> Query {
    try ending(Bound(value: value, key: key, inclusive: false, call: "endBefore"))
  }

  /// Only documents with `value` (and with `key`, only that pk): a start
  /// and an end at once.
  public func equalTo(_ value: JSONValue, key: String? = nil) throws -> Query {
    let bound = Bound(value: value, key: key, inclusive: true, call: "equalTo")
    return try starting(bound).ending(bound)
  }

  private func starting(_ bound: Bound) throws -> Query {
    if let start {
      throw Query.mistake(
        "\(bound.call) after \(start.call): a query has one start (startAt, startAfter or equalTo)")
    }
    try check(bound)
    var copy = self
    copy.start = bound
    return copy
  }

  private func ending(_ bound: Bound) throws -> Query {
    if let end {
      throw Query.mistake(
        "\(bound.call) after \(end.call): a query has one end (endAt, endBefore or equalTo)")
    }
    try check(bound)
    var copy = self
    copy.end = bound
    return copy
  }

  // Any JSON value is a cursor, objects and arrays included (Firebase
  // refuses those): they all sort as one class, ties broken by pk, so
  // `startAfter(<any object>, key: K)` continues after K and paging
  // never gets stuck on such values (issue 13).
  private func check(_ bound: Bound) throws {
    if ordering == .key {
      if bound.key != nil {
        throw Query.mistake(
          "\(bound.call)(_:key:) with orderByKey(): with orderByKey the value is the pk, so drop key:")
      }
      _ = try Query.pkBound(bound.value, call: bound.call)
    }
    if let key = bound.key, key.isEmpty {
      throw Query.mistake("\(bound.call) with an empty key: a pk is never empty")
    }
  }

  /// The pk a range value names under ``orderByKey()``.
  static func pkBound(_ value: JSONValue, call: String) throws -> String {
    switch value {
    case .string(let pk): return pk
    case .number(let text):
      // As Firebase: "When ordering by key, the argument … must be a string."
      throw mistake(
        "\(call) with the number \(text) and orderByKey(): the value must be a pk, a string (\"\(text)\")")
    default:
      throw mistake("\(call) with \(value.kindName) and orderByKey(): the value must be a pk (a string)")
    }
  }

  // MARK: Limits and filter

  /// The first `n` documents of the range, after filtering.
  public func limitToFirst(_ n: Int) throws -> Query {
    try limited(.first(n), n: n, call: "limitToFirst")
  }

  /// The last `n` documents of the range, after filtering, still in
  /// ascending order.
  public func limitToLast(_ n: Int) throws -> Query {
    try limited(.last(n), n: n, call: "limitToLast")
  }

  private func limited(_ new: Limit, n: Int, call: String) throws -> Query {
    if let limit {
      let previous =
        switch limit {
        case .first: "limitToFirst"
        case .last: "limitToLast"
        }
      throw Query.mistake("\(call) after \(previous): a query has one limit")
    }
    if n <= 0 { throw Query.mistake("\(call)(\(n)): a limit must be 1 or more") }
    var copy = self
    copy.limit = new
    return copy
  }

  /// The same query with another limit (live queries read ahead of their
  /// window; Observation/QueryObserver.swift).
  func replacingLimit(_ new: Limit?) -> Query {
    var copy = self
    copy.limit = new
    return copy
  }

  /// Keeps only documents that match `predicate`. Called twice, both must
  /// match.
  public func `where`(_ predicate: Predicate) -> Query {
    var copy = self
    copy.filter = filter.map { .and($0, predicate) } ?? predicate
    return copy
  }

  /// Keeps only documents that match `expression`, in the language of
  /// ``Predicate``.
  ///
  /// ```swift
  /// try todos.query().where(#"done == false && tags contains "home""#).get()
  /// ```
  /// - Throws: `INVALID_QUERY` with the position of the mistake.
  public func `where`(_ expression: String) throws -> Query {
    self.where(try Predicate(parsing: expression))
  }

  static func mistake(_ message: String) -> FolioError {
    FolioError(.invalidQuery, message)
  }
}

extension DocumentCollection {
  /// A query over every document of the table; chain calls on it to order,
  /// bound, limit and filter (see ``Query``).
  ///
  /// ```swift
  /// let firstPage = try todos.query().orderBy(child: "lastUpdate").limitToFirst(20).get()
  /// ```
  public func query() -> Query { Query(collection: self) }
}
