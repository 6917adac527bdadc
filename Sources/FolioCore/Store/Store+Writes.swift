import Dispatch
import FolioJSON
import Glibc

/// Writing: transactions, single mutations and their `async` forms, carried
/// out by ``StoreWriter``.
extension Store {
  /// Runs `body` as one transaction: every mutation it makes lands together,
  /// with one durability point, or none does if it throws.
  ///
  /// ```swift
  /// try store.write { tx in
  ///     try tx.apply(table: "todos", pk: "a", op: .upsert, columns: ["done": true])
  ///     try tx.apply(table: "todos", pk: "b", op: .remove)
  /// }
  /// ```
  /// Do not call `write` again from inside `body`.
  ///
  /// If another program (an editor) saves a document that `body` read
  /// before the transaction's durability point, `body` runs again on the
  /// saved file, so the save is never overwritten: keep `body` free of
  /// other side effects. A save that lands later, between the durability
  /// point and the rename, is folded in as an op of its own.
  /// - Throws: `CONFLICT` if documents kept changing through every retry.
  public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
    let checked = try writer.checkSchemasBeforeLocking(body)
    return try lock.withLock {
      try recovery.beforeWrite()
      return try writer.writeLocked(checked: checked, body)
    }
  }

  /// A handle on the table `name`. Operations on it throw `UNKNOWN_TABLE` if
  /// `folio.yaml` does not define it.
  public func collection(_ name: String) -> DocumentCollection {
    DocumentCollection(store: self, name: name)
  }

  /// Applies one mutation, with every transform rule (docs/architecture.md, "The transform rules"), and returns what
  /// it changed.
  ///
  /// ```swift
  /// try store.apply(table: "todos", pk: "3f2a", op: .update,
  ///                 columns: ["done": true], transforms: ["views": .increment(1)])
  /// ```
  /// - Parameters:
  ///   - columns: top-level columns to assign (applied first).
  ///   - transforms: per column, `{"op": "increment", "by": n}`,
  ///     `{"op": "arrayUnion", "values": [...]}` or
  ///     `{"op": "arrayRemove", "values": [...]}` (applied on top).
  /// - Returns: what changed; empty for an update of a missing document.
  /// - Throws: `LOCAL_CONSTRAINT` for a malformed transform, an insert of an
  ///   existing pk or a key column that disagrees with `pk`, before anything
  ///   is written.
  @discardableResult
  public func apply(
    table: String, pk: String, op: Mutation.Kind, columns: [String: JSONValue] = [:],
    transforms: [String: JSONValue] = [:]
  ) throws -> [UpdateResult] {
    try write { try $0.apply(table: table, pk: pk, op: op, columns: columns, transforms: transforms) }
  }

  /// ``apply(table:pk:op:columns:transforms:)`` with plain Swift values as
  /// columns.
  ///
  /// ```swift
  /// let title = "Buy milk"
  /// try store.apply(table: "todos", pk: "a", op: .upsert, columns: ["title": title, "views": 0])
  /// ```
  @discardableResult
  public func apply(
    table: String, pk: String, op: Mutation.Kind, columns: [String: any JSONRepresentable],
    transforms: [String: JSONValue] = [:]
  ) throws -> [UpdateResult] {
    try apply(table: table, pk: pk, op: op, columns: try columns.jsonValues(), transforms: transforms)
  }

  /// ``apply(table:pk:op:columns:transforms:)`` with the columns and
  /// transforms as JSON objects, so twin keys stay two columns.
  ///
  /// ```swift
  /// let columns: JSONObject = ["\u{E9}": 1, "e\u{301}": 2]  // two columns
  /// try store.apply(table: "todos", pk: "3f2a", op: .upsert, columns: columns)
  /// ```
  @discardableResult
  public func apply(
    table: String, pk: String, op: Mutation.Kind, columns: JSONObject, transforms: JSONObject = [:]
  ) throws -> [UpdateResult] {
    try write { try $0.apply(table: table, pk: pk, op: op, columns: columns, transforms: transforms) }
  }

  /// ``write(_:)`` for callers that already hold the lock (see
  /// ``StoreWriter/writeLocked(deferringFlush:checked:_:)``).
  package func writeLocked<T>(
    deferringFlush: Bool = false, checked: [String: CheckedDocument] = [:],
    _ body: (WriteTransaction) throws -> T
  ) throws -> T {
    try writer.writeLocked(deferringFlush: deferringFlush, checked: checked, body)
  }

  /// ``write(_:)`` with the flush deferred, for a stream of transactions
  /// from concurrent clients (see ``StoreWriter/writeDeferringFlush(_:)``).
  package func writeDeferringFlush<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
    try writer.writeDeferringFlush(body)
  }

  /// Flushes the files of deferred transactions and drops their records
  /// (see ``StoreWriter/checkpointDeferredWrites()``).
  package func checkpointDeferredWrites() throws { try writer.checkpointDeferredWrites() }
}

/// `async` forms of the writes.
///
/// Each runs the blocking call on the store's own serial queue (one per
/// ``Store``, like GRDB's `SerializedDatabase`), never on Swift's
/// cooperative thread pool, and resumes the caller when it is done. Calls on
/// one store run one after another, in the order they were made; the calls
/// of different stores, and of other processes, still coordinate through
/// the store lock as the blocking forms do. Cancelling the calling task does
/// not interrupt a call that has started: a write either lands whole or not
/// at all.
///
/// ```swift
/// try await store.apply(
///   table: "todos", pk: todoId, op: .update, columns: [:],
///   transforms: ["views": ["op": "increment", "by": 1]])
/// let todo = try await todos.findByID(todoId).exec(as: Todo.self)
/// ```
extension Store {
  /// Runs `body` on the store's executor and returns its result.
  package func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      executor.async { continuation.resume(with: Result { try body() }) }
    }
  }

  /// ``write(_:)``, run on the store's executor.
  ///
  /// ```swift
  /// try await store.write { tx in
  ///     try tx.apply(table: "todos", pk: "a", op: .upsert, columns: ["done": true])
  /// }
  /// ```
  @discardableResult
  public func write<T: Sendable>(_ body: @escaping @Sendable (WriteTransaction) throws -> T) async throws -> T
  {
    try await perform { try self.write(body) }
  }

  /// ``apply(table:pk:op:columns:transforms:)``, run on the store's executor.
  ///
  /// ```swift
  /// try await store.apply(table: "todos", pk: todoId, op: .update,
  ///                       columns: ["done": true], transforms: ["views": .increment(1)])
  /// ```
  @discardableResult
  public func apply(
    table: String, pk: String, op: Mutation.Kind, columns: [String: JSONValue] = [:],
    transforms: [String: JSONValue] = [:]
  ) async throws -> [UpdateResult] {
    try await perform {
      try self.apply(table: table, pk: pk, op: op, columns: columns, transforms: transforms)
    }
  }

  /// ``apply(table:pk:op:columns:transforms:)`` with Swift values, run on
  /// the store's executor.
  @discardableResult
  public func apply(
    table: String, pk: String, op: Mutation.Kind, columns: [String: any JSONRepresentable],
    transforms: [String: JSONValue] = [:]
  ) async throws -> [UpdateResult] {
    let columns = try columns.jsonValues()
    return try await apply(table: table, pk: pk, op: op, columns: columns, transforms: transforms)
  }
}

/// What `folio-bench` needs to time live queries honestly, kept out of the
/// public API (`@_spi(Benchmark) import Folio`).
extension Store {
  /// The wall-clock time (`CLOCK_REALTIME`, nanoseconds since 1970) at
  /// which the last transaction this `Store` committed became visible: its
  /// op log line and every document file were in place, past its
  /// durability point, before live queries were told and before the commit
  /// call returned. 0 before the first commit. The clock is the system's,
  /// so a time taken in another process on this machine compares with it.
  @_spi(Benchmark) public var lastCommitWallNanos: Int { lastCommitInstant.withLock { $0 } }

  /// The system's wall clock, in nanoseconds since 1970, as
  /// ``lastCommitWallNanos`` reads it.
  @_spi(Benchmark) public static func wallNanos() -> Int {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
  }
}
