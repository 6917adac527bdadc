/// A JSON object that keeps its members in insertion order.
///
/// Lookups are linear for small objects, which is what documents mostly are,
/// and go through a hash index once an object grows past a few dozen members.
///
/// Keys match by their exact Unicode scalars, as JSON defines them: "é"
/// (U+00E9) and "e\u{301}" are two different keys, although Swift's `String`
/// `==` calls them equal.
public struct JSONObject: Sendable {
  /// The members, in order.
  public private(set) var members: [(key: String, value: JSONValue)]
  // Keyed by exact bytes; see the type's documentation.
  private var index: [ExactKey: Int]?

  private static let indexThreshold = 24

  /// An empty object.
  public init() {
    members = []
  }

  /// An object from key-value pairs. A repeated key keeps its first position
  /// and its last value.
  public init<S: Sequence>(_ pairs: S) where S.Element == (String, JSONValue) {
    members = []
    for (key, value) in pairs { self[key] = value }
  }

  /// An object from members already known to have distinct keys (compared
  /// by exact bytes), such as the parser produces.
  package init(uniqueMembers: [(key: String, value: JSONValue)]) {
    members = uniqueMembers
    if members.count > Self.indexThreshold { rebuildIndex() }
  }

  /// The number of members.
  public var count: Int { members.count }
  /// Whether there are no members.
  public var isEmpty: Bool { members.isEmpty }
  /// The keys, in order.
  public var keys: [String] { members.map(\.key) }

  /// The position of `key`, if present.
  public func position(of key: String) -> Int? {
    if let index { return index[ExactKey(key)] }
    for i in members.indices where members[i].key.utf8Equals(key) { return i }
    return nil
  }

  /// The value for `key`. Setting `nil` removes the member; setting a new key
  /// appends it.
  public subscript(key: String) -> JSONValue? {
    get {
      guard let i = position(of: key) else { return nil }
      return members[i].value
    }
    set {
      if let i = position(of: key) {
        if let newValue {
          members[i].value = newValue
        } else {
          members.remove(at: i)
          if index != nil { rebuildIndex() }
        }
      } else if let newValue {
        members.append((key, newValue))
        if index != nil {
          index![ExactKey(key)] = members.count - 1
        } else if members.count > Self.indexThreshold {
          rebuildIndex()
        }
      }
    }
  }

  /// Removes `key` and returns its value, if it was present.
  @discardableResult
  public mutating func removeValue(forKey key: String) -> JSONValue? {
    let old = self[key]
    self[key] = nil
    return old
  }

  /// Removes every member whose key is in `keys`, in one pass: removing
  /// them one at a time would move the members after each and rebuild the
  /// index each time, which is quadratic in a large object.
  package mutating func removeValues(forKeys keys: Set<ExactKey>) {
    guard !keys.isEmpty else { return }
    let before = members.count
    members.removeAll { keys.contains(ExactKey($0.key)) }
    if members.count != before { rebuildIndex() }
  }

  private mutating func rebuildIndex() {
    if members.count <= Self.indexThreshold {
      index = nil
      return
    }
    var map = [ExactKey: Int](minimumCapacity: members.count)
    for (i, member) in members.enumerated() { map[ExactKey(member.key)] = i }
    index = map
  }
}

extension JSONObject: Sequence {
  /// Iterates over the members in order.
  public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
    members.makeIterator()
  }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
  /// An object, with members in the order written.
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self.init(elements)
  }
}
