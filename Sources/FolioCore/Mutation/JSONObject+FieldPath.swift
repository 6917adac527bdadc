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

  /// The value at `path` as Firebase's child paths read it, for ordering
  /// and filters: a step into an object takes its member, and a step into
  /// an array takes the element at that index (`tags.1`, written
  /// `tags/1` in Firebase) when the segment is a plain non-negative
  /// integer within the array. Nil when any step is missing.
  package func childValue(at path: FieldPath) -> JSONValue? {
    // One column, the common order key, costs what a member lookup does.
    if path.segments.count == 1 { return self[path.segments[0]] }
    var current = JSONValue.object(self)
    for segment in path.segments {
      switch current {
      case .object(let object):
        guard let next = object[segment] else { return nil }
        current = next
      case .array(let elements):
        guard let index = Self.arrayIndex(segment), index < elements.count else { return nil }
        current = elements[index]
      default:
        return nil
      }
    }
    return current
  }

  /// A path segment or key as an array index, as Firebase reads one:
  /// digits only, no leading zero, fewer than ten of them.
  package static func arrayIndex(_ segment: String) -> Int? {
    let bytes = segment.utf8
    guard let first = bytes.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9"),
      first != UInt8(ascii: "0") || bytes.count == 1, bytes.count <= 9,
      bytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
    else { return nil }
    return Int(segment)
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

extension JSONObject {
  /// The members at `paths` alone, in the order the paths name them, nested
  /// as in the document (`b.c` keeps `{"b": {"c": …}}`); a path the
  /// document lacks is left out. What `--select` prints.
  ///
  /// ```swift
  /// let doc: JSONObject = ["a": 1, "b": ["c": 2, "d": 3], "e": 4]
  /// doc.selecting(["b.c", "a"])   // {"b": {"c": 2}, "a": 1}
  /// ```
  public func selecting(_ paths: [FieldPath]) -> JSONObject {
    var result = JSONObject()
    for path in paths {
      guard let value = childValue(at: path) else { continue }
      result.setValue(value, at: path)
    }
    return result
  }
}
