import FolioCore

/// What queries need from the processes that vouch for a store's index
/// state (rule 2 in `TableIndex+Watch.swift`), and what they report back.
///
/// Query owns this hook and names nothing behind it: the index daemon layer
/// implements it, and the composition root (`StoreWiring+Layers.swift`)
/// registers it before the first store opens. Without one, every fresh
/// process takes the full check and starts nothing.
package protocol IndexPublisherLink: Sendable {
  /// Whether this process itself publishes the index state in
  /// `indexDirectory`: a query here must not ask it, for it would wait for
  /// the index cache the query holds.
  func isPublishing(indexDirectory: String) -> Bool

  /// The publisher's answer about `table`, or nil when none answers in
  /// time or it cannot vouch for the table.
  /// - Parameter reached: set to whether a publisher took the question.
  func ask(indexDirectory: String, table: String, signature: String, reached: inout Bool)
    -> PublisherAnswer?

  /// A query took the full check of a table of about `documents` documents
  /// because no publisher answered.
  func publisherMissed(store: Store, documents: Int)

  /// The files changed in the table folders since `token` (nil: since
  /// nothing, which names the moment and vouches for no table), or nil when
  /// no publisher answers in time.
  /// - Parameter reached: set to whether a publisher took the question.
  func changedFiles(indexDirectory: String, since token: String?, reached: inout Bool) -> ChangedFiles?
}
