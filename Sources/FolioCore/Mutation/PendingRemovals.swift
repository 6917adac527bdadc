import FolioJSON

/// The removals of a mutation not yet applied to its document, so that
/// they can be applied one pass per parent object at the end: one at a
/// time, each would move every member after it, and an op that unsets
/// 40,000 columns would take minutes.
///
/// A removal is held back until the end, and each assignment that meets
/// one settles it on the spot, so the result is the one applying every
/// assignment in order gives:
/// - a value set at a path removed earlier replaces the removal;
/// - a value set below a path removed earlier is set in an empty object
///   there;
/// - a value set above paths removed earlier replaces them.
///
/// Each removal is recorded and dropped once, and an assignment costs its
/// path's depth, so a mutation costs time linear in its size.
struct PendingRemovals {
  private final class Node {
    var removed = false
    var children: [ExactKey: Node] = [:]
  }

  private let root = Node()
  private var isEmpty = true

  /// Holds back the removal of `path`.
  mutating func remove(_ path: [String]) {
    var node = root
    for segment in path {
      // Under a path already removed, there is nothing left to remove.
      if node.removed { return }
      let key = ExactKey(segment)
      if let next = node.children[key] {
        node = next
      } else {
        let next = Node()
        node.children[key] = next
        node = next
      }
    }
    node.removed = true
    node.children = [:]
    isEmpty = false
  }

  /// Settles the removals that `value`, about to be set at `path` in
  /// `object`, meets.
  func settle(beforeSetting path: [String], in object: inout JSONObject) {
    guard !isEmpty else { return }
    var node = root
    for (depth, segment) in path.enumerated() {
      guard let next = node.children[ExactKey(segment)] else { return }
      node = next
      if node.removed && depth < path.count - 1 {
        // The set recreates what was removed, starting empty.
        node.removed = false
        node.children = [:]
        object.setValue(.object(JSONObject()), at: FieldPath(Array(path[...depth])))
        return
      }
    }
    // The set replaces whatever was removed at or under its path.
    node.removed = false
    node.children = [:]
  }

  /// Applies every removal still held, one pass per parent object.
  func apply(to object: inout JSONObject) {
    guard !isEmpty else { return }
    var parents: [(path: [String], names: Set<ExactKey>)] = []
    collect(root, path: [], into: &parents)
    for (path, names) in parents { object.removeValues(named: names, under: path[...]) }
  }

  private func collect(
    _ node: Node, path: [String], into parents: inout [(path: [String], names: Set<ExactKey>)]
  ) {
    var names: Set<ExactKey> = []
    for (key, child) in node.children {
      if child.removed {
        names.insert(key)
      } else {
        collect(child, path: path + [key.string], into: &parents)
      }
    }
    if !names.isEmpty { parents.append((path, names)) }
  }
}
