import FolioCore
import FolioJSON
import FolioSystem
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
  /// are (``PackValidation/notPacked``: not in the pack; ``queued``: read from its file
  /// and queued for the pack). Copies of the shared ``PackValidation``'s.
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
  /// The packed documents ``object(_:)`` handed out, in that order, and
  /// how many of them were not next in the pack after the one before: a
  /// scan in another order than the pack's (see ``reordersPack``).
  private var handedOut: [Int32] = []
  private var jumps = 0
  private var lastEnd = 0

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
  /// The files the index knows not to parse, by pk.
  var unreadable: [String: FolioError] { snapshot.unreadable }
  /// The document files read so far that did not parse, left out.
  private(set) var skipped: [FolioError] = []
  /// How many documents the pack lacked (tests).
  var missingCount: Int { missing.count }

  /// The path of `table`'s pack.
  static func path(store: Store, table: TableConfig) -> String {
    store.privateDirectory + "/index/" + IndexNames.fileStem(table.name) + ".docs"
  }

  /// What a pack must have been built for.
  static func signature(_ table: TableConfig) -> String { table.path + "\u{0}" + (table.key ?? "") }

  /// Reads the pack and validates it against `snapshot` (or takes the
  /// validation another query made of the same state, see
  /// ``SnapshotMemo``); rewrites it first when it is missing, damaged or
  /// mostly dead.
  init(store: Store, table: TableConfig, snapshot: IndexSnapshot) {
    self.snapshot = snapshot
    self.table = table
    let path = Self.path(store: store, table: table)
    self.path = path
    folder = store.directory(of: table)
    dirfd = open(folder, O_RDONLY | O_CLOEXEC | O_DIRECTORY)
    let signature = Self.signature(table)
    let validation = snapshot.memo.packValidation(at: path) { [folder] in
      let checked = PackValidation.checking(path: path, signature: signature, snapshot: snapshot)
      QueryStatistics.countCheck(checked.isSaved ? .savedPack : .pack, folder: folder)
      return checked
    }
    pack = validation.pack
    pks = validation.pks
    offsets = validation.offsets
    lengths = validation.lengths
    checkedAt = validation.checkedAt
    order = validation.order
    missing = validation.missing
    QueryStatistics.countPacked(order.count, folder: folder)
    if validation.wantsRewrite { rewrite(signature: signature, ids: order) }
  }

  deinit {
    if reordersPack {
      // Then the packed documents the cursor did not reach.
      var rest = [Bool](repeating: true, count: offsets.count)
      for id in handedOut { rest[Int(id)] = false }
      rewrite(signature: Self.signature(table), ids: handedOut + order.filter { rest[Int($0)] })
    }
    flush()
    if dirfd >= 0 { close(dirfd) }
  }

  /// Whether this query read nearly the whole pack, mostly not in the
  /// pack's order: each such read faults in pages around its record that
  /// the next read does not use (2x the time of a scan in pack order, with
  /// 300k documents), so the pack is written again in this query's order,
  /// which the next scan by the same ordering then reads front to back.
  private var reordersPack: Bool {
    order.count >= Self.minimumReads && handedOut.count >= order.count * 9 / 10
      && jumps * 2 > handedOut.count
  }

  /// Writes the pack anew with only the live records `ids`, in that order,
  /// so that what this query reads from files is appended after them.
  /// Skipped when another process holds the index lock; the next scan
  /// tries again.
  private func rewrite(signature: String, ids: [Int32]) {
    IndexNames.withLock(snapshot.lockPath, blocking: false) {
      // Written a few megabytes at a time, then renamed over the pack.
      let temp = path + ".new"
      let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
      guard fd >= 0 else { return }
      var written = true
      var out = DocumentPack.header(signature: signature)
      if let pack {
        for id in ids {
          DocumentPack.encode(
            pk: pks.pk(Int(id)), document: recordBytes(Int(id), in: pack), stat: pks.stat(Int(id)),
            checkedAt: checkedAt[Int(id)], into: &out)
          if out.count >= Self.appendThreshold {
            written = written && (try? FileSystem.writeAll(fd, out, path: temp)) != nil
            out.removeAll(keepingCapacity: true)
            pack.releasePages()
          }
        }
      }
      written = written && (try? FileSystem.writeAll(fd, out, path: temp)) != nil
      close(fd)
      if !written || rename(temp, path) != 0 { unlink(temp) }
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
    guard dirfd >= 0, let name = try? table.documentName(for: pk) else { return nil }
    let readAt = FileStat.now()
    let read: (object: JSONObject, stat: stat)?
    do {
      read = try TableIndex.readDocument(named: name, in: dirfd, folder: folder, table: table)
    } catch let error as FolioError where error.isUnreadableDocument {
      // Left out and named, as the index leaves it out (see
      // TableIndex.readEntryAndDocument).
      if !skipped.contains(where: { $0.location == error.location }) { skipped.append(error) }
      return nil
    }
    guard let (object, st) = read else { return nil }
    let stat = FileStat(st)
    if offsets[id] == PackValidation.notPacked && !stat.isRacy(checkedAt: readAt) {
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
  /// lookup by pk, sequential pages), each judged on its packed bytes
  /// where `packed` can (see ``PackedFilter``).
  func count(matching filter: Predicate, packed: PackedFilter?) throws -> Int {
    var n = 0
    var scratch: [Range<Int>?] = []
    if let packed {
      for id in order {
        let judged = packed.matches(packedBytes(Int(id), sequential: true), values: &scratch)
        if try judged ?? filter.matches(try parse(Int(id))) { n += 1 }
      }
    } else {
      for id in order where filter.matches(try parse(Int(id))) { n += 1 }
    }
    for id in missing {
      if let object = try readFile(Int(id)), filter.matches(object) { n += 1 }
    }
    return n
  }

  /// The document `pk`, or nil when the table does not hold it.
  func object(_ pk: String) throws -> JSONObject? {
    guard let id = id(of: pk) else { return nil }
    if offsets[id] >= 0 {
      let start = offsets[id]
      // A read within the pages the last one faulted in (the kernel maps
      // 64 KB around a fault) is as good as the next record.
      if start < lastEnd || start > lastEnd + (64 << 10) { jumps += 1 }
      lastEnd = start + Int(lengths[id])
      handedOut.append(Int32(id))
      return try parse(id)
    }
    if let object = kept.removeValue(forKey: id) { return object }
    return try readFile(id)
  }

  /// Whether document `pk` passes `packed`, judged on its packed bytes;
  /// nil when that does not apply (the document is not in the pack, or its
  /// bytes are not as Folio writes them).
  func matches(_ pk: String, packed: PackedFilter, scratch: inout [Range<Int>?]) -> Bool? {
    guard let id = id(of: pk), offsets[id] >= 0 else { return nil }
    return packed.matches(packedBytes(id), values: &scratch)
  }

  private func id(of pk: String) -> Int? {
    pk.utf8.withContiguousStorageIfAvailable({ pks.find(UnsafeRawBufferPointer($0)) })
      ?? Array(pk.utf8).withUnsafeBytes({ pks.find($0) })
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
