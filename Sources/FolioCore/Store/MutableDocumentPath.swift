import FolioJSON

/// A place in a ``MutableDocument``: read it, assign it, or transform it.
///
/// Assigning a literal (`d?["done"] = true`) works because a path can also
/// stand for a plain value; such a detached path only carries the value.
public struct MutableDocumentPath {
  let document: MutableDocument?
  let path: FieldPath?
  let detachedValue: JSONValue?

  init(document: MutableDocument, path: FieldPath) {
    self.document = document
    self.path = path
    self.detachedValue = document.value.value(at: path)
  }

  /// A detached path that stands for `value`, for assignment.
  public init(_ value: JSONValue) {
    document = nil
    path = nil
    detachedValue = value
  }

  func attached(_ operation: StaticString) -> (MutableDocument, FieldPath) {
    guard let document, let path else {
      preconditionFailure("\(operation) needs a path in a document, not a plain value")
    }
    return (document, path)
  }

  /// The current value, or nil if missing.
  public var value: JSONValue? {
    guard let document, let path else { return detachedValue }
    return document.value.value(at: path)
  }

  /// The member `key` of this path.
  public subscript(key: String) -> MutableDocumentPath {
    get {
      let (document, path) = attached("subscript")
      return MutableDocumentPath(document: document, path: path.appending(key))
    }
    nonmutating set {
      let (document, path) = attached("subscript")
      document.set(newValue.detachedValue, at: path.appending(key))
    }
  }

  /// Assigns `value`.
  public func set(_ value: JSONValue) {
    let (document, path) = attached("set")
    document.set(value, at: path)
  }

  /// Unsets the path.
  public func remove() {
    let (document, path) = attached("remove")
    document.set(nil, at: path)
  }

  /// Adds `amount` (an increment transform).
  public func increment(by amount: Int) {
    increment(by: DecimalInteger(amount))
  }

  /// Adds `amount`, of any size.
  public func increment(by amount: DecimalInteger) {
    let (document, path) = attached("increment")
    document.transform(.increment(amount), at: path)
  }

  /// Appends each value the array does not already hold.
  public func arrayUnion(_ values: [JSONValue]) {
    let (document, path) = attached("arrayUnion")
    document.transform(.arrayUnion(values), at: path)
  }

  /// Drops every member equal to one of `values`.
  public func arrayRemove(_ values: [JSONValue]) {
    let (document, path) = attached("arrayRemove")
    document.transform(.arrayRemove(values), at: path)
  }

  /// The value as a string, if it is one.
  public var stringValue: String? { value?.stringValue }
  /// The value as an Int, if it is an integer number that fits.
  public var intValue: Int? { value?.intValue }
  /// The value as a Bool, if it is one.
  public var boolValue: Bool? { value?.boolValue }
}

extension MutableDocumentPath: ExpressibleByNilLiteral {
  /// Stands for `null`.
  public init(nilLiteral: ()) { self.init(.null) }
}

extension MutableDocumentPath: ExpressibleByBooleanLiteral {
  /// Stands for a Bool.
  public init(booleanLiteral value: Bool) { self.init(.bool(value)) }
}

extension MutableDocumentPath: ExpressibleByIntegerLiteral {
  /// Stands for an integer.
  public init(integerLiteral value: Int) { self.init(.integer(value)) }
}

extension MutableDocumentPath: ExpressibleByFloatLiteral {
  /// Stands for a number.
  public init(floatLiteral value: Double) { self.init(JSONValue(floatLiteral: value)) }
}

extension MutableDocumentPath: ExpressibleByStringLiteral {
  /// Stands for a string.
  public init(stringLiteral value: String) { self.init(.string(value)) }
}

extension MutableDocumentPath: ExpressibleByArrayLiteral {
  /// Stands for an array.
  public init(arrayLiteral elements: JSONValue...) { self.init(.array(elements)) }
}

extension MutableDocumentPath: ExpressibleByDictionaryLiteral {
  /// Stands for an object.
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self.init(.object(JSONObject(elements)))
  }
}
