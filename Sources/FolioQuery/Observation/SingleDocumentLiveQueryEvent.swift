import FolioCore

/// What a single-document live query's handler receives with the document
/// (Ditto's `observeLocal`).
public struct SingleDocumentLiveQueryEvent: Sendable, Hashable {
  /// Whether this is the first event, which carries the document as it was
  /// when the observation started.
  public let isInitial: Bool
  /// The document as the handler last received it (nil if it did not exist
  /// then, and always nil in the initial event).
  public let oldDocument: Document?

  /// An event; public so that tests and adapters can build expected values.
  public init(isInitial: Bool, oldDocument: Document?) {
    self.isInitial = isInitial
    self.oldDocument = oldDocument
  }
}
