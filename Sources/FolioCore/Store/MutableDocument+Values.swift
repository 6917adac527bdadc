import FolioJSON

/// Plain Swift values in an update: assign a `String`, an `Int` or any
/// ``JSONRepresentable`` to a column, and read one back as a Swift type.
///
/// ```swift
/// let title = "Buy milk"
/// let tags = ["home", "offline"]
/// try todos.findByID("a").update { d in
///     d?["title"] = title
///     d?["meta"]["color"] = color
///     d?["tags"].arrayUnion(tags)
///     d?["views"].increment(by: n)
///     let done: Bool? = d?["done"]
/// }
/// ```
///
/// A value that cannot be converted (a `Double.nan`, an `Encodable` whose
/// `encode(to:)` throws) makes the whole `update` throw that error, and
/// nothing is recorded.
extension MutableDocument {
  /// The column `key` as a Swift value: nil when missing or of another
  /// type. Assigning stores the value's JSON form (nil stores `null`).
  public subscript<V: JSONRepresentable & Decodable>(key: String) -> V? {
    get { value[key].flatMap { try? $0.decode(V.self) } }
    set { assign(newValue, at: .column(key)) }
  }

  /// The value at `path` as a Swift value, as the column subscript reads
  /// and writes it.
  public subscript<V: JSONRepresentable & Decodable>(path: FieldPath) -> V? {
    get { value.value(at: path).flatMap { try? $0.decode(V.self) } }
    set { assign(newValue, at: path) }
  }

  /// The column `key` decoded as `type`, or nil when missing or of another
  /// type.
  ///
  /// ```swift
  /// let title = d?["title", as: String.self]
  /// ```
  public subscript<T: Decodable>(key: String, as type: T.Type) -> T? {
    value[key].flatMap { try? $0.decode(type) }
  }

  func assign(_ newValue: (some JSONRepresentable)?, at path: FieldPath) {
    do {
      set(try newValue?.jsonValue ?? .null, at: path)
    } catch {
      if deferredError == nil { deferredError = error }
    }
  }

  func record(_ body: () throws -> Void) {
    do { try body() } catch { if deferredError == nil { deferredError = error } }
  }
}

extension MutableDocumentPath {
  /// The member `key` as a Swift value; assigning stores its JSON form.
  ///
  /// ```swift
  /// d?["meta"]["color"] = color
  /// ```
  public subscript<V: JSONRepresentable & Decodable>(key: String) -> V? {
    get { value?[key].flatMap { try? $0.decode(V.self) } }
    nonmutating set {
      let (document, path) = attached("subscript")
      document.assign(newValue, at: path.appending(key))
    }
  }

  /// The value decoded as `type`, or nil when missing or of another type.
  ///
  /// ```swift
  /// let color = d?["meta"].as(String.self)
  /// ```
  public func `as`<T: Decodable>(_ type: T.Type) -> T? {
    value.flatMap { try? $0.decode(type) }
  }

  /// Assigns the JSON form of `value`.
  public func set(_ value: some JSONRepresentable) {
    let (document, path) = attached("set")
    document.assign(value, at: path)
  }

  /// Adds `amount`, any integer type (an increment transform).
  public func increment<T: BinaryInteger>(by amount: T) {
    let (document, path) = attached("increment")
    document.transform(.increment(DecimalInteger(exactly: amount)), at: path)
  }

  /// Appends each value the array does not already hold.
  public func arrayUnion<S: Sequence>(_ values: S) where S.Element: JSONRepresentable {
    let (document, path) = attached("arrayUnion")
    document.record { document.transform(.arrayUnion(try values.map { try $0.jsonValue }), at: path) }
  }

  /// Drops every member equal to one of `values`.
  public func arrayRemove<S: Sequence>(_ values: S) where S.Element: JSONRepresentable {
    let (document, path) = attached("arrayRemove")
    document.record { document.transform(.arrayRemove(try values.map { try $0.jsonValue }), at: path) }
  }
}
