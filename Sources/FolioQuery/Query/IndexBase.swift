import FolioJSON
import FolioSystem
import Glibc
import Synchronization

/// The compacted part of a table's order index: one immutable binary file,
/// `.git/folio/index/<table>.base`, mapped into memory and used in place.
///
/// It holds, per document, the file's stat data and pk, and for each order
/// key the value and a permutation of the documents sorted by (value, pk);
/// plus one permutation by pk. A query finds its start by binary search and
/// reads only the entries it passes, so a first page touches a few hundred
/// bytes of it.
///
/// Layout (little-endian):
/// ```
/// header   "FOLIOIX3", u32 keys, u32 docs, u64 generation,
///          directory stat (4 × i64) and its checkedAt (i64),
///          u32 signature length, u32 heap offset, u32 racy count,
///          u32 zero, signature bytes
/// docs     per document: inode, size, mtime, ctime, checkedAt (i64),
///          pk offset, pk length (u32)                      48 bytes each
/// pk perm  u32 per document
/// racy     u32 per document whose stat data was taken within a second of
///          its change (see ``FileStat/isRacy(checkedAt:)``), so that a
///          check need not look at every record to find them
/// per key  value offset and length (u32 each) per document, then u32 perm
/// heap     pks and values (compact JSON; empty for a missing value)
/// ```
// @unchecked: `bytes` is immutable memory that `storage` owns for the
// object's lifetime; the pk hash table is made once and published through
// an atomic, never changed after.
final class IndexBase: @unchecked Sendable {
  static let magic = Array("FOLIOIX3".utf8)
  static let headerSize = 80
  static let docSize = 48

  /// The memory a base lives in: the file mapped read-only, so that a
  /// fresh process faults in only the pages a query touches, or a copy of
  /// bytes just written.
  private final class Storage {
    let bytes: UnsafeRawBufferPointer
    private let mapped: Bool

    init(mapping bytes: UnsafeRawBufferPointer) {
      self.bytes = bytes
      mapped = true
    }

    init(copying array: [UInt8]) {
      let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(array.count, 1), alignment: 8)
      memory.copyBytes(from: array)
      bytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(memory)[0..<array.count])
      mapped = false
    }

    deinit {
      if mapped {
        munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
      } else {
        bytes.baseAddress.map { UnsafeMutableRawPointer(mutating: $0).deallocate() }
      }
    }
  }

  private let storage: Storage
  let bytes: UnsafeRawBufferPointer
  let keyCount: Int
  let count: Int
  let generation: UInt64
  let directory: FileStat
  let directoryCheckedAt: Int64
  let signature: String
  private let docsOffset: Int
  private let pkPermOffset: Int
  private let racyOffset: Int
  /// How many documents are racy (see ``racyDocument(_:)``).
  let racyCount: Int
  private let keysOffset: Int
  private let heapOffset: Int
  /// The pk hash table's slots once made (``find(_:)``), and their count
  /// less one (a power of two, at least twice the documents).
  private let slotTable = Atomic<UnsafeMutablePointer<Int32>?>(nil)
  private let slotMask: Int
  /// Lookups so far (see ``find(_:)``).
  private let lookups = Atomic<Int>(0)

  /// Reads the base file at `path` (mapped, not copied); nil if it is
  /// missing, torn or from another version.
  convenience init?(contentsOf path: String) {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var st = Glibc.stat()
    guard fstat(fd, &st) == 0, st.st_size >= IndexBase.headerSize else { return nil }
    let size = Int(st.st_size)
    // Folio replaces a base by rename and never writes one in place, so
    // the mapping stays whole while a newer base appears beside it. (A base
    // truncated in place by hand under a running process would fault it.)
    guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), address != MAP_FAILED else {
      return nil
    }
    self.init(storage: Storage(mapping: UnsafeRawBufferPointer(start: address, count: size)))
  }

  /// Reads a base from bytes; nil if they are torn or from another version.
  convenience init?(bytes: [UInt8]) {
    self.init(storage: Storage(copying: bytes))
  }

  private init?(storage: Storage) {
    let bytes = storage.bytes
    guard bytes.count >= Self.headerSize, Array(bytes[0..<8]) == IndexBase.magic else { return nil }
    self.storage = storage
    self.bytes = bytes
    keyCount = Int(Self.u32(bytes, 8))
    count = Int(Self.u32(bytes, 12))
    generation = UInt64(bitPattern: Self.i64(bytes, 16))
    directory = FileStat(
      inode: Self.i64(bytes, 24), size: Self.i64(bytes, 32), mtime: Self.i64(bytes, 40),
      ctime: Self.i64(bytes, 48))
    directoryCheckedAt = Self.i64(bytes, 56)
    let signatureLength = Int(Self.u32(bytes, 64))
    heapOffset = Int(Self.u32(bytes, 68))
    racyCount = Int(Self.u32(bytes, 72))
    let start = Self.headerSize
    guard racyCount <= count, start + signatureLength <= bytes.count,
      let signature = String(validating: bytes[start..<(start + signatureLength)], as: UTF8.self)
    else { return nil }
    self.signature = signature
    docsOffset = (start + signatureLength + 7) & ~7
    pkPermOffset = docsOffset + count * Self.docSize
    racyOffset = pkPermOffset + count * 4
    keysOffset = racyOffset + racyCount * 4
    guard keysOffset + keyCount * count * 12 == heapOffset, heapOffset <= bytes.count else { return nil }
    var capacity = 16
    while capacity < count * 2 { capacity <<= 1 }
    slotMask = capacity - 1
  }

  deinit { slotTable.load(ordering: .acquiring)?.deallocate() }

  // MARK: Reading

  static func u32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
    bytes.loadLittleEndian(fromByteOffset: offset, as: UInt32.self)
  }

  static func i64(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> Int64 {
    bytes.loadLittleEndian(fromByteOffset: offset, as: Int64.self)
  }

  /// The stat data recorded for document `doc`.
  func stat(_ doc: Int) -> FileStat {
    let o = docsOffset + doc * Self.docSize
    return FileStat(
      inode: Self.i64(bytes, o), size: Self.i64(bytes, o + 8), mtime: Self.i64(bytes, o + 16),
      ctime: Self.i64(bytes, o + 24))
  }

  /// When document `doc`'s stat data was taken.
  func checkedAt(_ doc: Int) -> Int64 { Self.i64(bytes, docsOffset + doc * Self.docSize + 32) }

  /// Document `doc`'s pk.
  func pk(_ doc: Int) -> String {
    let o = docsOffset + doc * Self.docSize + 40
    let start = heapOffset + Int(Self.u32(bytes, o))
    let length = Int(Self.u32(bytes, o + 4))
    return String(decoding: bytes[start..<(start + length)], as: UTF8.self)
  }

  /// Calls `body` with document `doc`'s pk as UTF-8 bytes, without copying.
  func withPKBytes<R>(_ doc: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    let o = docsOffset + doc * Self.docSize + 40
    let start = heapOffset + Int(Self.u32(bytes, o))
    let length = Int(Self.u32(bytes, o + 4))
    return body(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]))
  }

  /// The value of order key `key` in document `doc`; nil when missing.
  func value(_ doc: Int, key: Int) -> JSONValue? {
    let o = keysOffset + key * count * 12 + doc * 8
    let start = heapOffset + Int(Self.u32(bytes, o))
    let length = Int(Self.u32(bytes, o + 4))
    if length == 0 { return nil }
    return try? JSONValue(parsing: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]))
  }

  /// Everything recorded for document `doc`.
  func entry(_ doc: Int) -> IndexEntry {
    IndexEntry(stat: stat(doc), checkedAt: checkedAt(doc), values: (0..<keyCount).map { value(doc, key: $0) })
  }

  /// The `index`th of the documents whose record was racy when the base
  /// was written; the others' records are not.
  func racyDocument(_ index: Int) -> Int { Int(Self.u32(bytes, racyOffset + index * 4)) }

  /// The document at `position` in pk order.
  func byPK(_ position: Int) -> Int { Int(Self.u32(bytes, pkPermOffset + position * 4)) }

  /// The document at `position` in the order of key `key`.
  func byKey(_ key: Int, _ position: Int) -> Int {
    Int(Self.u32(bytes, keysOffset + key * count * 12 + count * 8 + position * 4))
  }

  /// The document with `pk` (compared as bytes), by a hash table of the
  /// pks made on the first call: the write path looks up every document
  /// it writes, and a binary search made a string of each pk it passed.
  func find(_ pk: String) -> Int? {
    var pk = pk
    return pk.withUTF8 { find(UnsafeRawBufferPointer($0)) }
  }

  /// The document whose pk is `pk` (UTF-8): by binary search over the pk
  /// order for the first lookups, then by the hash table. A search costs
  /// about 20 probes at a million documents, the table about 80 ns a
  /// document to make, so searches go on until they would have paid for
  /// it (a 64th of the documents, at least ``searchedLookups``): a process
  /// that writes a document or two (a `folio put`), replaying the index
  /// log's few hundred records, should not hash a million pks.
  func find(_ pk: UnsafeRawBufferPointer) -> Int? {
    if slotTable.load(ordering: .acquiring) == nil,
      lookups.wrappingAdd(1, ordering: .relaxed).oldValue < max(Self.searchedLookups, count / 64)
    {
      return search(pk)
    }
    let slots = pkSlots()
    var slot = Int(truncatingIfNeeded: FNV.hash(pk)) & slotMask
    while slots[slot] >= 0 {
      let doc = Int(slots[slot])
      if withPKBytes(doc, { $0.elementsEqual(pk) }) { return doc }
      slot = (slot + 1) & slotMask
    }
    return nil
  }

  /// The fewest lookups answered by binary search before the hash table
  /// is made.
  static let searchedLookups = 32

  /// The document whose pk is `pk`, by binary search over the documents in
  /// pk order (``byPK(_:)``), comparing bytes where the order ties.
  func search(_ pk: UnsafeRawBufferPointer) -> Int? {
    let key = PKSortKey(String(decoding: pk, as: UTF8.self))
    func keyOf(_ doc: Int) -> PKSortKey {
      PKSortKey(withPKBytes(doc) { String(decoding: $0, as: UTF8.self) })
    }
    var low = 0
    var high = count
    while low < high {
      let middle = (low + high) / 2
      if keyOf(byPK(middle)).compare(key) < 0 { low = middle + 1 } else { high = middle }
    }
    var position = low
    while position < count {
      let doc = byPK(position)
      if withPKBytes(
        doc,
        { $0.count == pk.count && (pk.isEmpty || memcmp($0.baseAddress!, pk.baseAddress!, pk.count) == 0) })
      {
        return doc
      }
      guard keyOf(doc).compare(key) == 0 else { return nil }
      position += 1
    }
    return nil
  }

  /// The hash table's slots (a document, or -1), made once: a thread that
  /// loses the race to publish its table frees it and uses the winner's.
  private func pkSlots() -> UnsafeMutablePointer<Int32> {
    if let slots = slotTable.load(ordering: .acquiring) { return slots }
    let made = UnsafeMutablePointer<Int32>.allocate(capacity: slotMask + 1)
    made.initialize(repeating: -1, count: slotMask + 1)
    for doc in 0..<count {
      var slot = withPKBytes(doc) { Int(truncatingIfNeeded: FNV.hash($0)) } & slotMask
      while made[slot] >= 0 { slot = (slot + 1) & slotMask }
      made[slot] = Int32(doc)
    }
    let (stored, current) = slotTable.compareExchange(
      expected: nil, desired: made, ordering: .acquiringAndReleasing)
    if stored { return made }
    made.deallocate()
    return current!
  }

  // MARK: Writing

  /// The heap of pk and value bytes an index file ends with, each
  /// document's references into it, each order key's permutation (by
  /// value, then pk) and the pk order: what ``encode`` lays out.
  private static func heapAndOrders(_ entries: [(pk: String, entry: IndexEntry)], keyCount: Int) -> (
    heap: [UInt8], pkRefs: [(UInt32, UInt32)], valueRefs: [[(UInt32, UInt32)]], perms: [[Int]], pkPerm: [Int]
  ) {
    let n = entries.count
    var heap: [UInt8] = []
    var pkRefs: [(UInt32, UInt32)] = []
    pkRefs.reserveCapacity(n)
    for (pk, _) in entries {
      pkRefs.append((UInt32(heap.count), UInt32(pk.utf8.count)))
      heap.append(contentsOf: pk.utf8)
    }
    var valueRefs: [[(UInt32, UInt32)]] = []
    var perms: [[Int]] = []
    let pkKeys = entries.map { PKSortKey($0.pk) }
    for key in 0..<keyCount {
      var refs: [(UInt32, UInt32)] = []
      refs.reserveCapacity(n)
      var orderValues: [OrderValue] = []
      orderValues.reserveCapacity(n)
      for (_, entry) in entries {
        let value = entry.values[key]
        orderValues.append(OrderValue(value))
        if let value {
          let text = value.compactBytes()
          refs.append((UInt32(heap.count), UInt32(text.count)))
          heap.append(contentsOf: text)
        } else {
          refs.append((0, 0))
        }
      }
      valueRefs.append(refs)
      perms.append(
        (0..<n).sorted { a, b in
          let c = orderValues[a].compare(orderValues[b])
          return c != 0 ? c < 0 : pkKeys[a].compare(pkKeys[b]) < 0
        })
    }
    let pkPerm = (0..<n).sorted { pkKeys[$0].compare(pkKeys[$1]) < 0 }
    return (heap, pkRefs, valueRefs, perms, pkPerm)
  }

  /// The bytes of a base file holding `entries`.
  static func encode(
    signature: String, generation: UInt64, directory: FileStat, directoryCheckedAt: Int64, keyCount: Int,
    entries: [(pk: String, entry: IndexEntry)]
  ) -> [UInt8] {
    let n = entries.count
    let (heap, pkRefs, valueRefs, perms, pkPerm) = heapAndOrders(entries, keyCount: keyCount)
    let racy = entries.indices.filter { entries[$0].entry.isRacy }

    var out: [UInt8] = []
    out.reserveCapacity(
      headerSize + signature.utf8.count + n * (52 + keyCount * 12) + racy.count * 4 + heap.count + 8)
    func put32(_ v: UInt32) { out.appendLittleEndian(v) }
    func put64(_ v: Int64) { out.appendLittleEndian(v) }
    out += magic
    put32(UInt32(keyCount))
    put32(UInt32(n))
    put64(Int64(bitPattern: generation))
    put64(directory.inode)
    put64(directory.size)
    put64(directory.mtime)
    put64(directory.ctime)
    put64(directoryCheckedAt)
    let signatureBytes = Array(signature.utf8)
    let docsOffset = (headerSize + signatureBytes.count + 7) & ~7
    let heapOffset = docsOffset + n * (docSize + 4) + racy.count * 4 + keyCount * n * 12
    put32(UInt32(signatureBytes.count))
    put32(UInt32(heapOffset))
    put32(UInt32(racy.count))
    put32(0)
    out += signatureBytes
    while out.count < docsOffset { out.append(0) }
    for (i, (_, entry)) in entries.enumerated() {
      put64(entry.stat.inode)
      put64(entry.stat.size)
      put64(entry.stat.mtime)
      put64(entry.stat.ctime)
      put64(entry.checkedAt)
      put32(pkRefs[i].0)
      put32(pkRefs[i].1)
    }
    for doc in pkPerm { put32(UInt32(doc)) }
    for doc in racy { put32(UInt32(doc)) }
    for key in 0..<keyCount {
      for ref in valueRefs[key] {
        put32(ref.0)
        put32(ref.1)
      }
      for doc in perms[key] { put32(UInt32(doc)) }
    }
    precondition(out.count == heapOffset, "index layout mismatch")
    out += heap
    return out
  }
}

/// A pk's sort key, computed once for sorting many pks.
struct PKSortKey {
  let pk: String
  let number: Int32?

  init(_ pk: String) {
    self.pk = pk
    number = ValueOrdering.int32(pk)
  }

  func compare(_ other: PKSortKey) -> Int {
    switch (number, other.number) {
    case (let x?, let y?):
      if x != y { return x < y ? -1 : 1 }
      let (m, n) = (pk.utf8.count, other.pk.utf8.count)
      if m != n { return m < n ? -1 : 1 }
      return ValueOrdering.compareUTF16(pk, other.pk)
    case (.some, nil): return -1
    case (nil, .some): return 1
    case (nil, nil): return ValueOrdering.compareUTF16(pk, other.pk)
    }
  }
}
