import FolioCore
import FolioJSON

/// Replays one document's ops in stamp order, keeping beside the value,
/// for each path, the op that set it: the tree of nodes follows the
/// document's shape, so an assignment replaces a whole subtree's sources
/// in one step and a lookup costs the path's depth.
final class BlameReplay {
  /// The sources of one path.
  final class Node {
    /// The assignment that put this path's value there whole.
    var assigned: BlameSource?
    /// The last transform that changed the value.
    var lastChange: BlameSource?
    /// Increments since the value was last assigned, oldest first.
    var increments: [BlameSource] = []
    /// The union that added each member still held.
    var members: [JSONValue: BlameSource] = [:]
    var children: [String: Node] = [:]

    init(assigned: BlameSource? = nil) { self.assigned = assigned }
  }

  /// The document as the ops left it; nil when removed or never made.
  private(set) var document: JSONObject?
  private var root = Node()
  private let pk: String
  private let key: String

  init(pk: String, key: String) {
    self.pk = pk
    self.key = key
  }

  /// Starts from `document`, whose values no op here explains: the
  /// document before the first op the logs still hold, when `folio
  /// compact` dropped the ones before it.
  func seed(_ document: JSONObject?) {
    self.document = document
    root = Node()
  }

  /// Applies `op`, whose source is `source`. An import's op names no
  /// content: `imported` is the document as the commit that brought it
  /// holds it.
  func apply(_ op: Op, source: BlameSource, imported: JSONObject?) {
    if op.fromTree {
      document = imported
      root = Node(assigned: source)
      return
    }
    var mutation = op.mutation
    let transforms = mutation.transforms
    mutation.transforms = []
    // Ops the log no longer holds (compacted) may leave an update with no
    // document to apply to; it is applied to an empty one, and whatever it
    // cannot explain is found in the commits instead.
    let start = document == nil && mutation.kind == .update ? JSONObject() : document
    let outcome = mutation.apply(to: start, pk: pk, key: key)
    if document == nil || outcome.document == nil {
      root = Node(assigned: outcome.document == nil ? nil : source)
    }
    document = outcome.document
    guard var object = document else { return }
    for assignment in mutation.assignments {
      let tokens = assignment.path.segments
      let parent = node(at: tokens.dropLast())
      parent.children[tokens.last!] = assignment.value == nil ? nil : Node(assigned: source)
    }
    if mutation.kind != .insert {
      for entry in transforms {
        guard let result = Mutation.apply(entry.transform, at: entry.path, in: &object, pk: pk) else {
          continue
        }
        let target = node(at: entry.path.segments[...])
        var change = source
        switch result {
        case .incremented:
          change.kind = .increment
          if case .increment(let by) = entry.transform { change.by = by }
          target.increments.append(change)
        case .unioned(_, _, let added):
          change.kind = .arrayUnion
          for member in added { target.members[member] = change }
        case .removedMembers(_, _, let dropped):
          change.kind = .arrayRemove
          for member in dropped { target.members[member] = nil }
        case .set, .removed:
          break
        }
        target.lastChange = change
      }
    }
    document = object
  }

  /// The node at `tokens` and the nearest assignment at or above it; the
  /// node is nil when no op touched the path itself.
  func lookup(_ tokens: [String]) -> (node: Node?, assigned: BlameSource?, assignedAtRoot: Bool) {
    var node: Node? = root
    var assigned = root.assigned
    var atRoot = true
    for token in tokens {
      node = node?.children[token]
      if let own = node?.assigned {
        assigned = own
        atRoot = false
      }
    }
    return (node, assigned, atRoot)
  }

  private func node(at tokens: ArraySlice<String>) -> Node {
    var node = root
    for token in tokens {
      if let child = node.children[token] {
        node = child
      } else {
        let child = Node()
        node.children[token] = child
        node = child
      }
    }
    return node
  }
}
