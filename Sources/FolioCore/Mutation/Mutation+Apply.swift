import FolioJSON

extension Mutation {
  /// The outcome of applying a mutation to a document.
  package struct Outcome {
    /// The new document, or nil if it is absent afterwards.
    package var document: JSONObject?
    /// What changed, in the order applied: assignments, then the
    /// transforms that took effect.
    package var results: [UpdateResult]
  }

  /// Applies the mutation to `document` (nil when absent), with the rules of
  /// the transform rules (docs/architecture.md). This one function serves local writes and
  /// merge replay, so a replica that replays an op gets the bytes the writer
  /// got.
  ///
  /// - An insert writes plain columns only; its transforms are ignored.
  /// - An update of a missing document changes nothing.
  /// - An upsert of a missing document starts from `{key: pk}`, or from
  ///   `{}` when `key` is nil (the pk lives in the file name only).
  /// - A new document always holds its pk in the `key` column, if any.
  package func apply(to document: JSONObject?, pk: String, key: String?) -> Outcome {
    var results: [UpdateResult] = []
    switch kind {
    case .remove:
      guard document != nil else { return Outcome(document: nil, results: []) }
      return Outcome(document: nil, results: [.removed(pk: pk, path: "")])
    case .update where document == nil:
      return Outcome(document: nil, results: [])
    default:
      break
    }
    var object = document ?? (key.map { [$0: .string(pk)] } ?? [:])
    // Removals are applied together at the end (see PendingRemovals).
    var removals = PendingRemovals()
    for assignment in assignments {
      if let value = assignment.value {
        removals.settle(beforeSetting: assignment.path.segments, in: &object)
        object.setValue(value, at: assignment.path)
        results.append(.set(pk: pk, path: assignment.path.description, value: value))
      } else {
        removals.remove(assignment.path.segments)
        results.append(.removed(pk: pk, path: assignment.path.description))
      }
    }
    removals.apply(to: &object)
    // seed 002: "The insert path writes plain columns only".
    if kind != .insert {
      for entry in transforms {
        if let result = Self.apply(entry.transform, at: entry.path, in: &object, pk: pk) {
          results.append(result)
        }
      }
    }
    return Outcome(document: object, results: results)
  }

  /// Applies one transform in place and says what it did; nil when it left the
  /// value alone (an increment of a non-integer).
  static func apply(
    _ transform: Transform, at path: FieldPath, in object: inout JSONObject, pk: String
  ) -> UpdateResult? {
    let current = object.value(at: path)
    switch transform {
    case .increment(let by):
      let base: DecimalInteger
      switch current {
      case nil, .null?:
        // seed 002: "treating a missing or null column as 0"
        base = .zero
      case .number(let text)?:
        guard let value = DecimalInteger(text) else { return nil }
        base = value
      case .string(let text)?:
        guard let value = DecimalInteger(text) else { return nil }
        base = value
      default:
        // seed 002: "a column whose current value is not an integer is left as it is"
        return nil
      }
      let sum = base + by
      // seed 002: "the stored result switches to a string past the 32-bit range"
      let stored: JSONValue =
        sum.int32Value != nil ? .number(sum.description) : .string(sum.description)
      object.setValue(stored, at: path)
      return .incremented(pk: pk, path: path.description, by: by.description)
    case .arrayUnion(let values):
      var array = current?.arrayValue ?? []
      var added: [JSONValue] = []
      // Hashing the canonical form keeps a union O(n): a remote op may carry
      // hundreds of thousands of members.
      var held = Set(array)
      for value in values where held.insert(value).inserted {
        array.append(value)
        added.append(value)
      }
      object.setValue(.array(array), at: path)
      return .unioned(pk: pk, path: path.description, values: added)
    case .arrayRemove(let values):
      let array = current?.arrayValue ?? []
      var kept: [JSONValue] = []
      var dropped: [JSONValue] = []
      let unwanted = Set(values)
      for member in array {
        if unwanted.contains(member) { dropped.append(member) } else { kept.append(member) }
      }
      object.setValue(.array(kept), at: path)
      return .removedMembers(pk: pk, path: path.description, values: dropped)
    }
  }
}
