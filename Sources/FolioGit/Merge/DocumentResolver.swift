import FolioCore
import FolioJSON

/// Resolves one document changed on both sides of a merge by replaying
/// operations (docs/architecture.md, "The replay merge").
///
/// Start from the base document, then apply both sides' ops since the base in
/// HLC order: assignments set, increments add, unions and removes apply, a
/// remove deletes, an update of a missing document does nothing, and an
/// insert of an existing one acts as an upsert. A side whose document its
/// ops do not explain (a file edited while nothing was watching, an import,
/// ops dropped by compaction) gets a synthetic op: the diff from what its ops
/// give to what it holds, read through the column kinds.
///
/// The result depends only on the base, the two sides and their ops, so every
/// replica that merges the same commits writes the same bytes.
package struct DocumentResolver {
  /// The table the document belongs to.
  var table: TableConfig

  /// One side of a merge: its document and the ops it has since the base.
  struct Side {
    var document: JSONObject?
    var ops: [Op]
    /// The stamp a synthetic op for this side gets: the side's commit time,
    /// and a replica name derived from the commit, so every replica picks
    /// the same one.
    var syntheticStamp: HLC
  }

  /// Replays `ops` (sorted by HLC) onto `document`.
  func replay(_ ops: [Op], onto document: JSONObject?, pk: String) -> JSONObject? {
    var current = document
    // An import's compact op carries no body to replay (see Op.fromTree).
    for op in ops where !op.fromTree {
      current = op.mutation.apply(to: current, pk: pk, key: table.key).document
    }
    return current
  }

  /// The side's ops, plus a synthetic op if they do not explain its document.
  func explain(_ side: Side, base: JSONObject?, pk: String) -> [Op] {
    let ops = side.ops.sorted { $0.hlc < $1.hlc }
    let replayed = replay(ops, onto: base, pk: pk)
    if Self.same(replayed, side.document) { return ops }
    let mutation: Mutation
    if let document = side.document {
      mutation = Mutation.diff(from: replayed, to: document, kinds: table.kind(of:))
    } else {
      mutation = Mutation(kind: .remove)
    }
    // The edit came after every op the side recorded, so it replays last
    // among them.
    var stamp = side.syntheticStamp
    if let last = ops.last?.hlc, !(last < stamp) {
      stamp = HLC.next(after: last, now: last.wall, replica: stamp.replica)
    }
    return ops + [Op(hlc: stamp, table: table.name, pk: pk, mutation: mutation)]
  }

  /// The merged document (nil when it ends removed).
  func resolve(pk: String, base: JSONObject?, ours: Side, theirs: Side) -> JSONObject? {
    var seen = Set<HLC>()
    var all: [Op] = []
    for op in explain(ours, base: base, pk: pk) + explain(theirs, base: base, pk: pk)
    where seen.insert(op.hlc).inserted {
      all.append(op)
    }
    all.sort { $0.hlc < $1.hlc }
    return replay(all, onto: base, pk: pk)
  }

  package static func same(_ a: JSONObject?, _ b: JSONObject?) -> Bool {
    switch (a, b) {
    case (nil, nil): true
    case (let a?, let b?): JSONValue.object(a) == JSONValue.object(b)
    default: false
    }
  }
}
