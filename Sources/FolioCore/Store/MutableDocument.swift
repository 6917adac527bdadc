import FolioJSON

/// A document being changed inside ``PendingIDSpecificOperation/update(_:)-4t3cc``.
///
/// Each change is recorded as it is made and becomes one mutation with
/// assignments and transforms, so that increments add up and unions merge
/// when replicas sync. Reads see the changes made so far.
///
/// ```swift
/// try todos.findByID("3f2a").update { d in
///     d?["done"] = true
///     d?["meta"]["color"] = "red"
///     d?["views"].increment(by: 1)
///     d?["tags"].arrayUnion(["offline"])
///     d?["draft"].remove()
/// }
/// ```
public final class MutableDocument {
  /// The document's pk.
  public let pk: String
  /// The document as it stands after the changes made so far.
  public private(set) var value: JSONObject
  private var assignments: [Mutation.Assignment] = []
  private var transforms: [Mutation.TransformEntry] = []
  /// The first error from converting a Swift value assigned in the update
  /// body (a setter cannot throw); the update throws it and records nothing
  /// (MutableDocument+Values.swift).
  var deferredError: (any Error)?

  init(pk: String, value: JSONObject) {
    self.pk = pk
    self.value = value
  }

  /// The column `key`: read it, assign to it, or transform it.
  public subscript(key: String) -> MutableDocumentPath {
    get { MutableDocumentPath(document: self, path: .column(key)) }
    set { set(newValue.detachedValue, at: .column(key)) }
  }

  /// The value at a nested path.
  public subscript(path: FieldPath) -> MutableDocumentPath {
    get { MutableDocumentPath(document: self, path: path) }
    set { set(newValue.detachedValue, at: path) }
  }

  /// The recorded changes as one update.
  var mutation: Mutation {
    Mutation(kind: .update, assignments: assignments, transforms: transforms)
  }

  /// Records an assignment (nil: an unset).
  ///
  /// The record is kept so that replaying it (assignments first, transforms
  /// after, as the transform rules order them) gives exactly the sequence of
  /// changes made here: a later set replaces earlier changes beneath it, and
  /// a transform under an assigned path is folded into the assigned value.
  func set(_ newValue: JSONValue?, at path: FieldPath) {
    // A transform on a parent of `path` can't be replayed after this set
    // without undoing it, so turn it into a plain assignment first.
    let parents = transforms.filter { path.hasPrefix($0.path) && $0.path != path }
    if let outermost = parents.min(by: { $0.path.segments.count < $1.path.segments.count }) {
      materialize(outermost.path)
    }
    value.setValue(newValue, at: path)
    if let i = assignments.firstIndex(where: { path.hasPrefix($0.path) }) {
      assignments[i].value = value.value(at: assignments[i].path)
      return
    }
    assignments.removeAll { $0.path.hasPrefix(path) }
    transforms.removeAll { $0.path.hasPrefix(path) }
    assignments.append(Mutation.Assignment(path: path, value: newValue))
  }

  /// Records a transform.
  func transform(_ transform: Transform, at path: FieldPath) {
    _ = Mutation.apply(transform, at: path, in: &value, pk: pk)
    if let i = assignments.firstIndex(where: { path.hasPrefix($0.path) }) {
      assignments[i].value = value.value(at: assignments[i].path)
      return
    }
    // Transforms on paths inside one another don't commute, and the op log
    // keeps order only per path; so the outermost of them becomes a plain
    // assignment of the value reached.
    let overlapping = transforms.filter {
      $0.path != path && ($0.path.hasPrefix(path) || path.hasPrefix($0.path))
    }
    if !overlapping.isEmpty {
      let outermost = ([path] + overlapping.map(\.path)).min { $0.segments.count < $1.segments.count }!
      materialize(outermost)
      return
    }
    transforms.append(Mutation.TransformEntry(path: path, transform: transform))
  }

  private func materialize(_ path: FieldPath) {
    transforms.removeAll { $0.path.hasPrefix(path) }
    assignments.removeAll { $0.path.hasPrefix(path) }
    assignments.append(Mutation.Assignment(path: path, value: value.value(at: path)))
  }
}
