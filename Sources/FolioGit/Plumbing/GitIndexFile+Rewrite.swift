internal import Clibgit2
import FolioSystem
import Glibc

extension GitIndexFile {
  /// Which entries a rewrite keeps, and where the edits go.
  struct RewritePlan {
    /// Runs of this index's entries (positions) that stay.
    var kept: [Range<Int>] = []
    /// Each edit, with the position of the entry it goes before.
    var inserts: [(before: Int, edit: Int)] = []
    /// How many entries the rewritten index has.
    var count = 0
    /// Whether an entry has extended flags (version 3).
    var extended = false
  }

  /// Writes the index at `path` as this index's entries with `edits`
  /// applied (each replaces every stage of its path, or removes them;
  /// in path order, one per path), through `index.lock` and a rename.
  ///
  /// An index of many entries is written split (``GitIndexFile+Split``),
  /// as `policy` allows: the entries that changed since the shared index
  /// and a bitmap of those it no longer has, so the cost follows the
  /// changes. A whole index is written with unchanged entries copied as
  /// they are, in runs: a copy and a hash of the file, not an entry's
  /// parse each. Extensions are left out: the cached tree would be stale
  /// where the edits are, and git and libgit2 rebuild what they need.
  /// `reshareAbove` overrides when a split index gets a new shared one
  /// (tests).
  func write(
    to path: String, applying edits: [GitIndex.Edit], policy: SplitIndexPolicy, reshareAbove: Int? = nil
  ) throws {
    let plan = rewritePlan(edits)
    if policy.splits(count: plan.count) {
      try writeSplit(to: path, plan, edits: edits, reshareAbove: reshareAbove)
    } else {
      try GitIndex.writeIndexFile(at: path) { try writeWhole(&$0, plan, edits: edits) }
    }
  }

  /// Which entries stay and where each edit goes.
  func rewritePlan(_ edits: [GitIndex.Edit]) -> RewritePlan {
    var plan = RewritePlan()
    var position = 0
    for (j, edit) in edits.enumerated() {
      let key = Array(edit.path.utf8)
      let at = firstPosition(atOrAfter: key)
      precondition(at >= position, "edits are not in path order")
      if at > position { plan.kept.append(position..<at) }
      var end = at
      while end < entries.count, Self.compare(entries[end].path, key) == 0 { end += 1 }
      plan.inserts.append((at, j))
      position = end
    }
    if position < entries.count { plan.kept.append(position..<entries.count) }
    plan.count = plan.kept.reduce(0) { $0 + $1.count } + edits.filter { $0.entry != nil }.count
    // Entries copied from a version 3 file may carry extended flags, so
    // the file keeps version 3 when it had it.
    plan.extended =
      top.version == 3 || shared?.version == 3
      || edits.contains { ($0.entry?.flags_extended ?? 0) & GitIndex.extendedMask != 0 }
    return plan
  }

  /// Calls `kept` for each entry that stays and `edit` for each edit that
  /// sets an entry, in the rewritten index's order.
  func forEachRewritten(_ plan: RewritePlan, kept: (Range<Int>) throws -> Void, edit: (Int) throws -> Void)
    rethrows
  {
    var runs = plan.kept[...]
    func keep(upTo limit: Int) throws {
      while let range = runs.first, range.lowerBound < limit {
        let upper = min(range.upperBound, limit)
        try kept(range.lowerBound..<upper)
        if upper == range.upperBound {
          runs = runs.dropFirst()
        } else {
          runs[runs.startIndex] = upper..<range.upperBound
        }
      }
    }
    for (before, j) in plan.inserts {
      try keep(upTo: before)
      try edit(j)
    }
    try keep(upTo: entries.count)
  }

  /// Appends the whole rewritten index: header and entries.
  func writeWhole(_ writer: inout IndexFileWriter, _ plan: RewritePlan, edits: [GitIndex.Edit]) throws {
    writer.appendHeader(entries: plan.count, extended: plan.extended)
    try forEachRewritten(
      plan,
      kept: { range in try copy(range, to: &writer) },
      edit: { j in try append(edits[j], to: &writer) })
  }

  /// Copies the entries at `range` as they are, in runs of adjacent bytes.
  func copy(_ range: Range<Int>, to writer: inout IndexFileWriter) throws {
    guard !range.isEmpty else { return }
    if !isSplit {
      // One file: the run is one stretch of it.
      let last = entries[range.upperBound - 1]
      let start = entries[range.lowerBound].fields
      try writer.appendRaw(UnsafeRawBufferPointer(start: start, count: last.fields + last.length - start))
      return
    }
    var run: (start: UnsafeRawPointer, end: UnsafeRawPointer)?
    for position in range {
      let entry = entries[position]
      if entry.isWhole, let current = run, current.end == entry.fields {
        run = (current.start, entry.fields + entry.length)
        continue
      }
      if let current = run {
        try writer.appendRaw(UnsafeRawBufferPointer(start: current.start, count: current.end - current.start))
      }
      run = nil
      if entry.isWhole {
        run = (entry.fields, entry.fields + entry.length)
      } else {
        writer.append(copying: entry)
      }
    }
    if let current = run {
      try writer.appendRaw(UnsafeRawBufferPointer(start: current.start, count: current.end - current.start))
    }
  }

  /// Appends the entry `edit` sets, if it sets one.
  func append(_ edit: GitIndex.Edit, to writer: inout IndexFileWriter) throws {
    guard var entry = edit.entry else { return }
    try edit.path.withCString { pointer in
      entry.path = pointer
      try writer.append(entry)
    }
  }
}
