import FolioJSON

/// Cursors from plain Swift values: a `Double`, an `Int`, a `String` held in
/// a variable (a literal works either way).
///
/// ```swift
/// let height: Double = 3
/// let tall = try dinosaurs.query().orderBy(child: "height").startAt(height).get()
/// ```
extension Query {
  /// ``startAt(_:key:)-(JSONValue,_)`` with a Swift value.
  public func startAt(_ value: some JSONRepresentable, key: String? = nil) throws -> Query {
    let json: JSONValue = try value.jsonValue
    return try startAt(json, key: key)
  }

  /// ``startAfter(_:key:)-(JSONValue,_)`` with a Swift value.
  public func startAfter(_ value: some JSONRepresentable, key: String? = nil) throws -> Query {
    let json: JSONValue = try value.jsonValue
    return try startAfter(json, key: key)
  }

  /// ``endAt(_:key:)-(JSONValue,_)`` with a Swift value.
  public func endAt(_ value: some JSONRepresentable, key: String? = nil) throws -> Query {
    let json: JSONValue = try value.jsonValue
    return try endAt(json, key: key)
  }

  /// ``endBefore(_:key:)-(JSONValue,_)`` with a Swift value.
  public func endBefore(_ value: some JSONRepresentable, key: String? = nil) throws -> Query {
    let json: JSONValue = try value.jsonValue
    return try endBefore(json, key: key)
  }

  /// ``equalTo(_:key:)-(JSONValue,_)`` with a Swift value.
  public func equalTo(_ value: some JSONRepresentable, key: String? = nil) throws -> Query {
    let json: JSONValue = try value.jsonValue
    return try equalTo(json, key: key)
  }
}
