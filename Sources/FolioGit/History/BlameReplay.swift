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
  private let key: String?

  init(pk: String, key: String?) {
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
    // Ops the log no longer holds (compacted) may leave an update with no
    // document to apply to; it is applied to an empty one, and whatever it
    // cannot explain is found in the commits instead.
    let start = document == nil && op.mutation.kind == .update ? JSONObject() : document
    // The same apply a write and a merge use; its results say what each
    // assignment and each transform that took effect did.
    let outcome = op.mutation.apply(to: start, pk: pk, key: key)
    if document == nil || outcome.document == nil {
      root = Node(assigned: outcome.document == nil ? nil : source)
    }
    document = outcome.document
    guard document != nil else { return }
    for result in outcome.results {
      switch result {
      case .set(_, let path, _):
        let tokens = FieldPath(path).segments
        node(at: tokens.dropLast()).children[tokens.last!] = Node(assigned: source)
      case .removed(_, let path):
        let tokens = FieldPath(path).segments
        node(at: tokens.dropLast()).children[tokens.last!] = nil
      case .incremented(_, let path, let by):
        let change = source.as(.increment, by: DecimalInteger(by))
        let target = node(at: FieldPath(path).segments[...])
        target.increments.append(change)
        target.lastChange = change
      case .unioned(_, let path, let added):
        let change = source.as(.arrayUnion)
        let target = node(at: FieldPath(path).segments[...])
        for member in added { target.members[member] = change }
        target.lastChange = change
      case .removedMembers(_, let path, let dropped):
        let target = node(at: FieldPath(path).segments[...])
        for member in dropped { target.members[member] = nil }
        target.lastChange = source.as(.arrayRemove)
      }
    }
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

extension BlameSource {
  /// The same op and commit, as a transform of `kind`.
  fileprivate func `as`(_ kind: Kind, by: DecimalInteger? = nil) -> BlameSource {
    BlameSource(kind: kind, stamp: stamp, by: by, commit: commit)
  }
}
