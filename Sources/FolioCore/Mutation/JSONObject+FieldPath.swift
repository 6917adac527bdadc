import FolioJSON

extension JSONObject {
  /// The value at `path`, or nil if any step is missing or not an object.
  package func value(at path: FieldPath) -> JSONValue? {
    var current = self
    for segment in path.segments.dropLast() {
      guard case .object(let next)? = current[segment] else { return nil }
      current = next
    }
    return current[path.segments[path.segments.count - 1]]
  }

  /// Sets the value at `path`, creating objects for missing or non-object
  /// steps; nil unsets (and a missing step then means nothing to unset).
  package mutating func setValue(_ value: JSONValue?, at path: FieldPath) {
    setValue(value, at: path.segments[...])
  }

  private mutating func setValue(_ value: JSONValue?, at segments: ArraySlice<String>) {
    let head = segments.first!
    if segments.count == 1 {
      self[head] = value
      return
    }
    var child: JSONObject
    if case .object(let existing)? = self[head] {
      child = existing
    } else {
      if value == nil { return }
      child = JSONObject()
    }
    // Drop our reference first so the child is uniquely held and mutates in place.
    self[head] = .null
    child.setValue(value, at: segments.dropFirst())
    self[head] = .object(child)
  }

  /// Removes the members named `names` from the object at `parent` (this
  /// object when `parent` is empty), in one pass; a missing or non-object
  /// step means nothing to remove.
  mutating func removeValues(named names: Set<ExactKey>, under parent: ArraySlice<String>) {
    guard let head = parent.first else {
      removeValues(forKeys: names)
      return
    }
    guard case .object(var child)? = self[head] else { return }
    // Drop our reference first so the child is uniquely held and mutates in place.
    self[head] = .null
    child.removeValues(named: names, under: parent.dropFirst())
    self[head] = .object(child)
  }
}
