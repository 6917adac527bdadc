import Glibc

/// Every live document of a table for one query: from the packed cache
/// (``DocumentPack``) where its record matches the checked index, else from
/// the document's file, read when it is asked for. Files read here are
/// written back to the pack (only those whose stat data was not racy), a
/// few megabytes at a time, so the next scan finds them there and memory
/// stays flat however many documents the pack lacks.
///
/// Built from an ``IndexSnapshot`` just checked against the files (the
/// index's rules decide what changed behind Folio's back), and used on one
/// thread.
final class PackedDocuments {
  private let snapshot: IndexSnapshot
  private let pack: DocumentPack?
  private let pks: PKTable
  private let table: TableConfig
  private let folder: String
  private let dirfd: Int32
  private let path: String
  /// Per document id: where its bytes start in the pack and how many there
  /// are (``notPacked``: not in the pack; ``queued``: read from its file
  /// and queued for the pack).
  private var offsets: [Int]
  private var lengths: [Int32]
  /// When each pack record's bytes were read.
  private var checkedAt: [Int64]
  /// Ids served from the pack, in pack order (a sequential read).
  private var order: [Int32] = []
  /// Live ids the pack lacks, in id order.
  private var missing: [Int32] = []
  /// Documents a ``forEach(_:)`` read from files, kept (up to
  /// ``keptLimit``) for the lookups that follow it.
  private var kept: [Int: JSONObject] = [:]
  /// Records read from files, not yet appended to the pack.
  private var pending: [UInt8] = []
  /// Pack bytes read since its pages were last released.
  private var touched = 0

  private static let notPacked = -1
  private static let queued = -2

  /// How many documents a query must read before it reads them from the
  /// pack instead of their files.
  static let minimumReads = 2000
  /// How many documents read from files a scan keeps for its cursor; past
  /// that they are read again, so memory does not grow with the table.
  static let keptLimit = 4096
  /// How many bytes of new records gather before they are appended.
  static let appendThreshold = 4 << 20
  /// How many bytes of the pack are read (counting a page per record)
  /// before its pages are released
  /// (``DocumentPack/releasePages()``): memory stays flat however large it is.
  static let releaseThreshold = 16 << 20

  /// How many live documents there are (some may be gone from their files
  /// since the check).
  var count: Int { order.count + missing.count }
  /// How many documents the pack lacked (tests).
  var missingCount: Int { missing.count }

  /// The path of `table`'s pack.
  static func path(store: Store, table: TableConfig) -> String {
    store.privateDirectory + "/index/" + IndexNames.fileStem(table.name) + ".docs"
  }

  /// What a pack must have been built for.
  static func signature(_ table: TableConfig) -> String { table.path + "\u{0}" + table.key }

  /// Reads the pack and validates it against `snapshot`; rewrites it first
  /// when it is missing, damaged or mostly dead.
  init(store: Store, table: TableConfig, snapshot: IndexSnapshot) {
    self.snapshot = snapshot
    self.table = table
    path = Self.path(store: store, table: table)
    folder = store.directory(of: table)
    dirfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    let signature = Self.signature(table)
    pack = DocumentPack.open(path, signature: signature)
    pks = PKTable(snapshot)
    let total = pks.count
    offsets = [Int](repeating: Self.notPacked, count: total)
    lengths = [Int32](repeating: 0, count: total)
    checkedAt = [Int64](repeating: 0, count: total)

    var intact = pack != nil
    var dead = 0
    if let pack {
      let base = pack.bytes.baseAddress!
      intact = pack.forEachRecord { record in
        guard let id = pks.find(record.pk), offsets[id] < 0, pks.stat(id) == record.stat,
          !record.stat.isRacy(checkedAt: record.checkedAt)
        else {
          dead += 1
          return
        }
        offsets[id] = record.document.baseAddress! - base
        lengths[id] = Int32(record.document.count)
        checkedAt[id] = record.checkedAt
        order.append(Int32(id))
      }
    }
    for id in 0..<total where offsets[id] < 0 && pks.isLive(id) { missing.append(Int32(id)) }
    pack?.releasePages()
    QueryStatistics.countPacked(order.count, folder: folder)
    if !intact || dead > order.count { rewrite(signature: signature) }
  }

  deinit {
    flush()
    if dirfd >= 0 { close(dirfd) }
  }

  /// Writes the pack anew with only its live records, so that what this
  /// query reads from files is appended after them. Skipped when another
  /// process holds the index lock; the next scan tries again.
  private func rewrite(signature: String) {
    IndexNames.withLock(snapshot.lockPath, blocking: false) {
      var out = DocumentPack.header(signature: signature)
      if let pack {
        for id in order {
          DocumentPack.encode(
            pk: pks.pk(Int(id)), document: recordBytes(Int(id), in: pack), stat: pks.stat(Int(id)),
            checkedAt: checkedAt[Int(id)], into: &out)
        }
      }
      try? FileSystem.writeAtomically(path, out, sync: false)
    }
  }

  /// Appends the records read from files so far. Skipped when another
  /// process holds the index lock; the next scan reads those files again.
  private func flush() {
    guard !pending.isEmpty else { return }
    let bytes = pending
    pending = []
    IndexNames.withLock(snapshot.lockPath, blocking: false) {
      // Only onto a pack that exists: one that is gone would be started
      // without a header.
      guard FileStat.of(path) != nil else { return }
      try? IndexNames.append(bytes, to: path)
    }
  }

  /// Reads document `id` from its file, and queues its bytes for the pack.
  /// - Returns: nil when the file is gone since the check.
  private func readFile(_ id: Int) throws -> JSONObject? {
    let pk = pks.pk(id)
    guard dirfd >= 0, let name = try? PrimaryKey.fileName(for: pk) else { return nil }
    let readAt = FileStat.now()
    guard let (object, st) = try TableIndex.readDocument(named: name, in: dirfd, folder: folder, table: table)
    else { return nil }
    let stat = FileStat(st)
    if offsets[id] == Self.notPacked && !stat.isRacy(checkedAt: readAt) {
      offsets[id] = Self.queued
      DocumentPack.encode(
        pk: pk, document: JSONValue.object(object).compactBytes(), stat: stat, checkedAt: readAt,
        into: &pending)
      if pending.count >= Self.appendThreshold { flush() }
    }
    return object
  }

  /// Calls `body` with every live document: the pack's in file order, then
  /// the ones read from files.
  func forEach(_ body: (String, JSONObject) throws -> Void) throws {
    for id in order {
      try body(pks.pk(Int(id)), try parse(Int(id)))
    }
    for id in missing {
      guard let object = try readFile(Int(id)) else { continue }
      if kept.count < Self.keptLimit { kept[Int(id)] = object }
      try body(pks.pk(Int(id)), object)
    }
  }

  /// How many live documents pass `filter`, read in the pack's order (no
  /// lookup by pk, sequential pages), each judged from only the members
  /// the filter reads where `columns` allows (see ``matches(_:filter:columns:)``).
  func count(matching filter: Predicate, columns: [[UInt8]]?) throws -> Int {
    var n = 0
    for id in order {
      let passes =
        try columns.flatMap { try judge(Int(id), filter, columns: $0, sequential: true) }
        ?? filter.matches(try parse(Int(id)))
      if passes { n += 1 }
    }
    for id in missing {
      if let object = try readFile(Int(id)), filter.matches(object) { n += 1 }
    }
    return n
  }

  /// The document `pk`, or nil when the table does not hold it.
  func object(_ pk: String) throws -> JSONObject? {
    guard
      let id = pk.utf8.withContiguousStorageIfAvailable({ pks.find(UnsafeRawBufferPointer($0)) })
        ?? Array(pk.utf8).withUnsafeBytes({ pks.find($0) })
    else { return nil }
    if offsets[id] >= 0 { return try parse(id) }
    if let object = kept.removeValue(forKey: id) { return object }
    return try readFile(id)
  }

  /// Whether document `pk` passes `filter`, judged from only the members
  /// it reads (`columns`, ASCII names without escapes), parsed from the
  /// pack's bytes; nil when that shortcut does not apply (the document is
  /// not in the pack, or its bytes are not as Folio writes them).
  func matches(_ pk: String, filter: Predicate, columns: [[UInt8]]) throws -> Bool? {
    guard let id = Array(pk.utf8).withUnsafeBytes({ pks.find($0) }), offsets[id] >= 0 else { return nil }
    return try judge(id, filter, columns: columns)
  }

  /// Whether packed document `id` passes `filter`, judged from only its
  /// members named in `columns`; nil when its bytes are not as Folio
  /// writes them.
  private func judge(_ id: Int, _ filter: Predicate, columns: [[UInt8]], sequential: Bool = false) throws
    -> Bool?
  {
    guard let members = CompactMembers.find(columns, in: packedBytes(id, sequential: sequential)) else {
      return nil
    }
    return filter.matches(try Self.partial(members))
  }

  private static func partial(_ members: [(UnsafeRawBufferPointer, UnsafeRawBufferPointer)]) throws
    -> JSONObject
  {
    var partial = JSONObject()
    for (key, value) in members {
      partial[String(decoding: key, as: UTF8.self)] = try JSONValue(parsing: value)
    }
    return partial
  }

  /// The packed bytes of document `id`. Read out of file order, a record
  /// maps the pages around it too (the kernel's fault-around, 64 KB).
  private func packedBytes(_ id: Int, sequential: Bool = false) -> UnsafeRawBufferPointer {
    touched += sequential ? Int(lengths[id]) : Swift.max(Int(lengths[id]), 64 << 10)
    if touched >= Self.releaseThreshold {
      touched = 0
      pack!.releasePages()
    }
    return recordBytes(id, in: pack!)
  }

  /// Document `id`'s bytes in `pack`.
  private func recordBytes(_ id: Int, in pack: DocumentPack) -> UnsafeRawBufferPointer {
    let start = offsets[id]
    return UnsafeRawBufferPointer(rebasing: pack.bytes[start..<(start + Int(lengths[id]))])
  }

  private func parse(_ id: Int) throws -> JSONObject {
    // Written by Folio from a parsed object, and checksummed: it parses.
    guard case .object(let object) = try JSONValue(parsing: packedBytes(id)) else {
      preconditionFailure("a packed document is not an object")
    }
    return object
  }
}

/// The live documents of an index snapshot by pk bytes: ids `0..<base.count`
/// are the base's documents, the rest the overlay's. An open-addressing hash
/// table, so that matching 300k pack records costs a hash each.
private struct PKTable {
  let snapshot: IndexSnapshot
  let baseCount: Int
  let overlayPKs: [[UInt8]]
  private var slots: [Int32]
  private let mask: Int

  var count: Int { baseCount + overlayPKs.count }

  init(_ snapshot: IndexSnapshot) {
    self.snapshot = snapshot
    baseCount = snapshot.base?.count ?? 0
    overlayPKs = snapshot.overlay.map { Array($0.pk.utf8) }
    let total = baseCount + overlayPKs.count
    var capacity = 16
    while capacity < total * 2 { capacity <<= 1 }
    slots = [Int32](repeating: -1, count: capacity)
    mask = capacity - 1
    for id in 0..<total where isLive(id) {
      var slot = withPK(id) { Int(truncatingIfNeeded: FNV.hash($0)) } & mask
      while slots[slot] >= 0 { slot = (slot + 1) & mask }
      slots[slot] = Int32(id)
    }
  }

  func isLive(_ id: Int) -> Bool { id >= baseCount || !snapshot.overridden[id] }

  func withPK<R>(_ id: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    if id < baseCount { return snapshot.base!.withPKBytes(id, body) }
    return overlayPKs[id - baseCount].withUnsafeBytes(body)
  }

  func pk(_ id: Int) -> String { withPK(id) { String(decoding: $0, as: UTF8.self) } }

  func stat(_ id: Int) -> FileStat {
    id < baseCount ? snapshot.base!.stat(id) : snapshot.overlay[id - baseCount].entry.stat
  }

  /// The live document whose pk is `pk` (UTF-8).
  func find(_ pk: UnsafeRawBufferPointer) -> Int? {
    var slot = Int(truncatingIfNeeded: FNV.hash(pk)) & mask
    while slots[slot] >= 0 {
      let id = Int(slots[slot])
      if withPK(id, { $0.elementsEqual(pk) }) { return id }
      slot = (slot + 1) & mask
    }
    return nil
  }
}

/// Finds top-level members in compact JSON as Folio writes it (no
/// whitespace), without parsing the rest: strings are skipped to their
/// closing quote, containers by depth.
enum CompactMembers {
  /// The members of the object in `bytes` whose key bytes are one of
  /// `keys` (which hold no `"` or `\\`), as (key, value bytes); nil if the
  /// bytes are not a compact object.
  static func find(_ keys: [[UInt8]], in bytes: UnsafeRawBufferPointer) -> [(
    UnsafeRawBufferPointer, UnsafeRawBufferPointer
  )]? {
    let quote = UInt8(ascii: "\"")
    let backslash = UInt8(ascii: "\\")
    let n = bytes.count
    guard n >= 2, bytes[0] == UInt8(ascii: "{") else { return nil }
    var found: [(UnsafeRawBufferPointer, UnsafeRawBufferPointer)] = []
    var i = 1
    if bytes[1] == UInt8(ascii: "}") { return found }
    /// The index just past the string starting at `j` (a quote).
    func skipString(_ j: Int) -> Int? {
      var k = j + 1
      while k < n {
        if bytes[k] == backslash {
          k += 2
          continue
        }
        if bytes[k] == quote { return k + 1 }
        k += 1
      }
      return nil
    }
    while i < n {
      guard bytes[i] == quote, let keyEnd = skipString(i), keyEnd < n, bytes[keyEnd] == UInt8(ascii: ":")
      else {
        return nil
      }
      let key = UnsafeRawBufferPointer(rebasing: bytes[(i + 1)..<(keyEnd - 1)])
      var j = keyEnd + 1
      guard j < n else { return nil }
      let valueStart = j
      switch bytes[j] {
      case quote:
        guard let end = skipString(j) else { return nil }
        j = end
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        var depth = 0
        repeat {
          switch bytes[j] {
          case quote:
            guard let end = skipString(j) else { return nil }
            j = end
            continue
          case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
          case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
          default: break
          }
          j += 1
        } while depth > 0 && j < n
        guard depth == 0 else { return nil }
      default:
        while j < n && bytes[j] != UInt8(ascii: ",") && bytes[j] != UInt8(ascii: "}") { j += 1 }
      }
      guard j < n else { return nil }
      if keys.contains(where: { key.elementsEqual($0) }) {
        found.append((key, UnsafeRawBufferPointer(rebasing: bytes[valueStart..<j])))
      }
      if bytes[j] == UInt8(ascii: "}") { return j == n - 1 ? found : nil }
      guard bytes[j] == UInt8(ascii: ",") else { return nil }
      i = j + 1
    }
    return nil
  }
}
