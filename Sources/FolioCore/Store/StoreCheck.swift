import FolioSystem

/// A later layer's part of `folio fsck` (``Store/check()``): problems in
/// committed files that the store itself does not read, such as the
/// conflict records of merges. Registered in ``StoreWiring``, so the store
/// names none of them.
package protocol StoreCheck: Sendable {
  /// Every problem found, each placed at `file:line:col` where it can be.
  func problems(in store: Store) throws -> [FolioError]
}
