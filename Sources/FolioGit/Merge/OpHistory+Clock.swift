import FolioCore
import FolioSystem
import Foundation

extension OpHistory {
  /// Refuses ops from another replica stamped too far ahead of this
  /// machine's clock.
  ///
  /// A stamp is the only thing that orders concurrent assignments, so one
  /// from far in the future would beat every edit made until then, and
  /// moving the local clock past it would drag this replica's stamps along.
  /// Ops this history has that `base` does not are checked: the part of a
  /// fetch that is new.
  /// - Parameters:
  ///   - base: the history already trusted (the local commit), or nil for a
  ///     clone, where every op is new.
  ///   - now: the local wall clock, in milliseconds.
  ///   - bound: how far ahead a stamp may be (`max-clock-skew`).
  /// - Throws: `CLOCK_SKEW` naming the op log, line, replica and op;
  ///   `INVALID_JSON` at the line of a malformed op or stamp.
  func checkClock(since base: OpHistory?, now: Int64, bound: Duration) throws {
    let limit = now + Int64(bound.components.seconds) * 1000
    for name in names.sorted() {
      let file = Store.opsFolder + "/" + name
      for (line, op) in try newOps(in: name, since: base)
      where op.hlc.wall > limit {
        let ahead = Double(op.hlc.wall - now) / 3_600_000
        throw FolioError(
          .clockSkew,
          "op \(op.hlc) from replica '\(op.hlc.replica)' (\(op.mutation.kind.rawValue) \(op.table)/\(op.pk)) is stamped "
            + String(format: "%.1f", ahead) + " hours ahead of this machine's clock, past the bound of "
            + "\(DurationParser.format(bound)); nothing was merged. If that replica's clock is right and this "
            + "one's is wrong, fix this clock; to accept such stamps, raise 'max-clock-skew' under 'sync:' "
            + "in folio.yaml",
          location: .init(file: file, line: line, column: 1))
      }
    }
  }
}
