import FolioJSON

extension Mutation {
  /// The mutation that turns `old` into `new`, read through the column kinds
  /// of `table`: a counter edit becomes an increment by the delta, a set edit
  /// a union of what was added and a remove of what was removed, and anything
  /// else assignments and unsets, with nested objects diffed by path.
  ///
  /// `folio put`, the watcher and merges of edits made without an op all use
  /// it. A transform is only chosen when replaying it on `old` gives exactly
  /// `new`, so the replayed bytes always equal the edited ones.
  package static func diff(from old: JSONObject?, to new: JSONObject, kinds: (String) -> ColumnKind)
    -> Mutation
  {
    guard let old else {
      return Mutation(
        kind: .insert,
        assignments: new.map { Assignment(path: .column($0.key), value: $0.value) })
    }
    var mutation = Mutation(kind: .update)
    for (column, newValue) in new {
      let oldValue = old[column]
      if let oldValue, oldValue == newValue { continue }
      let path = FieldPath.column(column)
      switch kinds(column) {
      case .counter:
        if let transform = counterTransform(from: oldValue, to: newValue) {
          mutation.transforms.append(TransformEntry(path: path, transform: transform))
          continue
        }
      case .set:
        if let transforms = setTransforms(from: oldValue, to: newValue) {
          mutation.transforms += transforms.map { TransformEntry(path: path, transform: $0) }
          continue
        }
      case .register:
        break
      }
      appendAssignments(from: oldValue, to: newValue, at: path, into: &mutation)
    }
    for (column, _) in old where new[column] == nil {
      mutation.assignments.append(Assignment(path: .column(column), value: nil))
    }
    return mutation
  }

  private static func appendAssignments(
    from old: JSONValue?, to new: JSONValue, at path: FieldPath, into mutation: inout Mutation
  ) {
    guard case .object(let oldObject)? = old, case .object(let newObject) = new else {
      mutation.assignments.append(Assignment(path: path, value: new))
      return
    }
    for (key, value) in newObject {
      let oldValue = oldObject[key]
      if let oldValue, oldValue == value { continue }
      appendAssignments(from: oldValue, to: value, at: path.appending(key), into: &mutation)
    }
    for (key, _) in oldObject where newObject[key] == nil {
      mutation.assignments.append(Assignment(path: path.appending(key), value: nil))
    }
  }

  /// `increment(new - old)` when both are integers and replaying it gives `new`.
  private static func counterTransform(from old: JSONValue?, to new: JSONValue) -> Transform? {
    func integer(_ value: JSONValue?) -> DecimalInteger? {
      switch value {
      case nil, .null?: .zero
      case .number(let text)?, .string(let text)?: DecimalInteger(text)
      default: nil
      }
    }
    guard let from = integer(old), let to = integer(new), !new.isNull else { return nil }
    let transform = Transform.increment(to - from)
    return replays(transform: [transform], from: old, to: new) ? transform : nil
  }

  /// `arrayRemove(removed)` then `arrayUnion(added)` when replaying them gives `new`.
  private static func setTransforms(from old: JSONValue?, to new: JSONValue) -> [Transform]? {
    guard case .array(let newArray) = new else { return nil }
    let oldArray: [JSONValue]
    switch old {
    case nil, .null?: oldArray = []
    case .array(let array)?: oldArray = array
    default: return nil
    }
    let oldMembers = Set(oldArray)
    let newMembers = Set(newArray)
    let removed = oldArray.filter { !newMembers.contains($0) }
    let added = newArray.filter { !oldMembers.contains($0) }
    var transforms: [Transform] = []
    if !removed.isEmpty { transforms.append(.arrayRemove(removed)) }
    if !added.isEmpty || transforms.isEmpty { transforms.append(.arrayUnion(added)) }
    return replays(transform: transforms, from: old, to: new) ? transforms : nil
  }

  private static func replays(transform: [Transform], from old: JSONValue?, to new: JSONValue)
    -> Bool
  {
    let path = FieldPath.column("v")
    var object = JSONObject()
    if let old { object["v"] = old }
    for t in transform { _ = apply(t, at: path, in: &object, pk: "") }
    return object["v"] == new
  }
}
