import FolioCore
import FolioJSON

extension DocumentResolver {
  /// An assignment that a concurrent assignment overwrote during replay:
  /// the material of a ``Conflict`` record.
  struct Overwrite: Hashable {
    /// The path whose value was lost: the deeper of the two assignments'
    /// paths, so that `meta.a` lost to an assignment of `meta` reads as
    /// `meta.a`.
    var path: FieldPath
    var loser: HLC
    var losingValue: JSONValue
    var winner: HLC
    /// Nil when the winner unset the path.
    var winningValue: JSONValue?
  }

  /// ``resolve(pk:base:ours:theirs:)``, and every assignment that an
  /// assignment of the other side overwrote on the way.
  ///
  /// Two ops are concurrent when each is in one side's ops and not in the
  /// other's: neither replica had seen the other's (the sides are what each
  /// commit knows beyond the merge base). Every pair of concurrent
  /// assignments to overlapping paths is reported, not only the pair that
  /// meets last, so the set of records does not depend on which replica
  /// merged first. Counters and sets lose nothing in a merge and are never
  /// reported; nor is an assignment that met an equal value.
  ///
  /// Whether a pair is reported depends on the two ops alone, never on the
  /// document between them. A pair meets in the first merge that holds
  /// both, and on another replica, or in another order, that merge may or
  /// may not hold a third op, such as a concurrent remove between them or
  /// before them that makes the later one an update of nothing. Were such a
  /// pair left out when the remove is there, a replica that met the pair
  /// before the remove would keep a record that the others never write,
  /// and the folder would differ between replicas. So the pair is recorded
  /// either way; a remove later than the lost value settles the record when
  /// conflicts are listed (``Store/conflicts(table:)``), on every replica
  /// alike.
  func resolveRecording(pk: String, base: JSONObject?, ours: Side, theirs: Side) -> (
    document: JSONObject?, overwrites: [Overwrite]
  ) {
    let ourOps = explain(ours, base: base, pk: pk)
    let theirOps = explain(theirs, base: base, pk: pk)
    let ourStamps = Set(ourOps.map(\.hlc))
    let theirStamps = Set(theirOps.map(\.hlc))
    var seen = Set<HLC>()
    var all: [Op] = []
    for op in ourOps + theirOps where seen.insert(op.hlc).inserted { all.append(op) }
    all.sort { $0.hlc < $1.hlc }

    // Assignments replayed so far that only one side knows (0: ours, 1:
    // theirs); an op both sides hold is no one's news.
    var applied: [(side: Int, hlc: HLC, path: FieldPath, value: JSONValue?)] = []
    var overwrites: [Overwrite] = []
    var current = base
    for op in all where !op.fromTree {
      current = op.mutation.apply(to: current, pk: pk, key: table.key).document
      // A remove does not drop the assignments replayed before it, and an
      // update that a remove left with nothing to update still pairs with
      // them: a pair is judged by its two ops alone (see above).
      let side: Int? =
        switch (ourStamps.contains(op.hlc), theirStamps.contains(op.hlc)) {
        case (true, false): 0
        case (false, true): 1
        default: nil
        }
      guard let side else { continue }
      for assignment in op.mutation.assignments {
        let kind = table.kind(of: assignment.path.column)
        if kind == .counter || kind == .set { continue }
        for earlier in applied where earlier.side != side {
          guard let overwrite = Self.overwrite(earlier, by: (op.hlc, assignment)) else { continue }
          overwrites.append(overwrite)
        }
        applied.append((side, op.hlc, assignment.path, assignment.value))
      }
    }
    return (current, overwrites)
  }

  /// What `winner` took from `earlier`, if their paths overlap and the
  /// value at the deeper one changed.
  private static func overwrite(
    _ earlier: (side: Int, hlc: HLC, path: FieldPath, value: JSONValue?),
    by winner: (hlc: HLC, assignment: Mutation.Assignment)
  ) -> Overwrite? {
    let path: FieldPath
    let lost: JSONValue?
    let won: JSONValue?
    let later = winner.assignment.path
    if earlier.path.hasPrefix(later) {
      path = earlier.path
      lost = earlier.value
      won = value(winner.assignment.value, at: earlier.path.segments.dropFirst(later.segments.count))
    } else if later.hasPrefix(earlier.path) {
      path = later
      lost = value(earlier.value, at: later.segments.dropFirst(earlier.path.segments.count))
      won = winner.assignment.value
    } else {
      return nil
    }
    guard let lost, lost != won else { return nil }
    return Overwrite(path: path, loser: earlier.hlc, losingValue: lost, winner: winner.hlc, winningValue: won)
  }

  private static func value(_ value: JSONValue?, at segments: ArraySlice<String>) -> JSONValue? {
    var current = value
    for segment in segments {
      guard case .object(let object)? = current else { return nil }
      current = object[segment]
    }
    return current
  }
}
