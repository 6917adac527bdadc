import FolioCore

/// What a query live query's handler receives with the documents.
public enum LiveQueryEvent: Sendable, Hashable {
  /// The first event: the documents as they were when the observation
  /// started.
  case initial
  /// A change since the documents the handler last received.
  case update(LiveQueryUpdate)

  /// Whether this is the initial event.
  public var isInitial: Bool {
    if case .initial = self { return true }
    return false
  }
}

/// How a query's results changed between two deliveries.
///
/// The index sets follow the rules of a batch update of a list view:
/// `deletions` index the old list, `insertions` and `updates` the new one,
/// and `moves` pair an old index with a new one. Documents not named keep
/// their relative order. ``childEvents`` say the same per document, in the
/// order removed, added, moved, changed (as in Firebase).
public struct LiveQueryUpdate: Sendable, Hashable {
  /// The documents as the handler last received them.
  public let oldDocuments: [Document]
  /// Indexes in the new list of documents that were not in the old one.
  public let insertions: [Int]
  /// Indexes in the old list of documents that are not in the new one.
  public let deletions: [Int]
  /// Indexes in the new list of documents whose content changed.
  public let updates: [Int]
  /// Documents in both lists whose order changed: (old index, new index).
  public let moves: [LiveQueryMove]
  /// The same change, one event per document.
  public let childEvents: [ChildEvent]
}

/// One document that changed place: from an old index to a new one.
public struct LiveQueryMove: Sendable, Hashable {
  /// Its index in the old list.
  public let from: Int
  /// Its index in the new list.
  public let to: Int

  /// A move.
  public init(from: Int, to: Int) {
    self.from = from
    self.to = to
  }
}

/// A change to one document of a query's results (as in Firebase).
public struct ChildEvent: Sendable, Hashable {
  /// What happened.
  public enum Kind: String, Sendable, Hashable {
    /// It left the results (deleted, filtered out or pushed out of a limit).
    case removed = "child_removed"
    /// It entered the results.
    case added = "child_added"
    /// It stayed but changed place.
    case moved = "child_moved"
    /// It stayed and its content changed.
    case changed = "child_changed"
  }

  /// What happened.
  public let kind: Kind
  /// The document's pk.
  public let key: String
  /// The pk of the document just before it in the new results, or nil if
  /// it is first; for `removed`, the one before it in the old results.
  public let prevKey: String?
  /// The document: its new content, or for `removed` its last content.
  public let document: Document

  /// An event.
  public init(kind: Kind, key: String, prevKey: String?, document: Document) {
    self.kind = kind
    self.key = key
    self.prevKey = prevKey
    self.document = document
  }
}
