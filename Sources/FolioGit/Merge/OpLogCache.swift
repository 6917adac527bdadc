import FolioCore

/// Op log blobs and their parsed tails, kept for one sync or merge.
///
/// A log is megabytes long, and one sync reads the same few logs again and
/// again: the clock check reads the fetched logs against the local ones,
/// and the merge reads the base's, ours and theirs, where most logs are
/// one blob in two of the three trees. Blobs are immutable by id, so each
/// is inflated once here, and the ops one blob adds over another are
/// parsed once, whichever repository handle asks.
///
/// Confinement: one thread uses an `OpLogCache`; it is not `Sendable`.
final class OpLogCache {
  private var blobs: [GitOID: [UInt8]] = [:]
  private var tails: [Pair: [(line: Int, op: Op)]] = [:]

  /// A log blob and the blob it is read against (nil: none).
  private struct Pair: Hashable {
    var id: GitOID
    var base: GitOID?
  }

  init() {}

  /// The bytes of blob `id`, read through `repository` the first time.
  func blob(_ id: GitOID, repository: GitRepository) throws -> [UInt8] {
    if let bytes = blobs[id] { return bytes }
    let bytes = try repository.blob(id)
    blobs[id] = bytes
    return bytes
  }

  /// The bytes of blob `id`, if it was read here.
  func cachedBlob(_ id: GitOID) -> [UInt8]? { blobs[id] }

  /// The ops blob `id` adds over blob `base`, computed by `parse` the first
  /// time this pair is asked for.
  func newOps(
    of id: GitOID, since base: GitOID?, parse: () throws -> [(line: Int, op: Op)]
  ) rethrows -> [(line: Int, op: Op)] {
    let pair = Pair(id: id, base: base)
    if let ops = tails[pair] { return ops }
    let ops = try parse()
    tails[pair] = ops
    return ops
  }
}
