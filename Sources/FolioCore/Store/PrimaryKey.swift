import FolioSystem

/// The reversible mapping between a document's pk and its file name.
///
/// Bytes outside `[A-Za-z0-9._-]` are percent-encoded (`%2F` for `/`, `%25`
/// for `%`), so a pk can never name a path outside its table folder. An empty
/// pk, `.`, `..` and pks that start with a dot are rejected, as are pks whose
/// file name, or the temp name that writes it, would pass the file system's
/// 255-byte limit.
///
/// ```swift
/// try PrimaryKey.fileName(for: "a/b")   // "a%2Fb.json"
/// PrimaryKey.pk(fromFileName: "a%2Fb.json")   // "a/b"
/// ```
public enum PrimaryKey {
  /// The suffix of every document file.
  public static let fileExtension = ".json"
  /// The longest file name Folio writes (ext4 and most others allow 255 bytes).
  public static let maximumFileNameLength = 255
  /// The longest document file name: every write goes through a temp file
  /// named `.<name>.folio-tmp`, 11 bytes longer, which must fit too; a
  /// longer name would pass every check and then fail at the write, after
  /// the transaction's durability point.
  public static let maximumDocumentFileNameLength = maximumFileNameLength - 11

  private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

  private static func isSafe(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
      UInt8(ascii: "-"):
      true
    default: false
    }
  }

  /// Checks that `pk` can be stored, and throws `INVALID_PK` (or
  /// `LOCAL_CONSTRAINT` for a name too long) saying why not.
  public static func validate(_ pk: String) throws {
    _ = try fileName(for: pk)
  }

  /// The file name (with `.json`) that stores the document `pk`.
  /// - Throws: `INVALID_PK` for an empty pk, `.`, `..` or a leading dot;
  ///   `LOCAL_CONSTRAINT` for a name too long for the file system.
  public static func fileName(for pk: String) throws -> String {
    if pk.isEmpty {
      throw FolioError(.invalidPK, "a pk must not be empty", pk: pk)
    }
    if pk.utf8.first == UInt8(ascii: ".") {
      throw FolioError(
        .invalidPK, "pk '\(pk)' starts with '.'; such names are reserved for hidden files", pk: pk)
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(pk.utf8.count + 5)
    encodeStem(pk.utf8) { bytes.append($0) }
    bytes.append(contentsOf: fileExtension.utf8)
    if bytes.count > maximumDocumentFileNameLength {
      throw FolioError(
        .localConstraint,
        "pk is too long: its file name would be \(bytes.count) bytes, and the limit is "
          + "\(maximumDocumentFileNameLength) (the file system's \(maximumFileNameLength) less the "
          + "11 of Folio's temp name; each byte outside [A-Za-z0-9._-] takes 3)",
        pk: String(pk.prefix(40)) + "…")
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Hands `emit` each byte of the file-name stem of `pk` (its UTF-8):
  /// bytes in `[A-Za-z0-9._-]` as they are, any other as `%XX`. The one
  /// pk encoder: ``fileName(for:)`` and the index's allocation-free sweep
  /// both use it.
  @inline(__always)
  package static func encodeStem(_ pk: some Sequence<UInt8>, _ emit: (UInt8) -> Void) {
    for byte in pk {
      if isSafe(byte) {
        emit(byte)
      } else {
        emit(UInt8(ascii: "%"))
        emit(hex[Int(byte >> 4)])
        emit(hex[Int(byte & 0xF)])
      }
    }
  }

  /// The pk stored in a file named `name`, or nil if `name` is not a document
  /// file name that Folio would write (wrong suffix, hidden, bad escapes, or
  /// not in canonical encoding).
  public static func pk(fromFileName name: String) -> String? {
    guard name.hasSuffix(fileExtension), name.utf8.first != UInt8(ascii: ".") else { return nil }
    let stem = name.utf8.dropLast(fileExtension.utf8.count)
    if stem.isEmpty { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(stem.count)
    var iterator = stem.makeIterator()
    while let byte = iterator.next() {
      if byte == UInt8(ascii: "%") {
        guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue)
        else { return nil }
        bytes.append(high << 4 | low)
      } else if isSafe(byte) {
        bytes.append(byte)
      } else {
        return nil
      }
    }
    guard let pk = String(validating: bytes, as: UTF8.self) else { return nil }
    // Only the canonical spelling maps back, so one pk has exactly one file.
    guard (try? fileName(for: pk)) == name else { return nil }
    return pk
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  /// Crockford's base 32, whose digits sort in ASCII order as their values do.
  private static let base32 = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

  /// A new pk for a document that has none: 26 characters, sortable by
  /// creation time, unique across replicas (48 bits of milliseconds, then
  /// 80 random bits, in Crockford base 32).
  public static func generate() -> String {
    var out = [UInt8](repeating: 0, count: 26)
    appendBase32(UInt64(SystemClock.nowMilliseconds()), digits: 10, into: &out, at: 0)
    var generator = SystemRandomNumberGenerator()
    appendBase32(generator.next() as UInt64, digits: 12, into: &out, at: 10)
    appendBase32(generator.next() as UInt64, digits: 4, into: &out, at: 22)
    return String(decoding: out, as: UTF8.self)
  }

  /// A new pk made from `stamp`, for the rows of one import: 26 characters
  /// like ``generate()``'s, holding the stamp's milliseconds (10 digits)
  /// and counter (3 digits), then 65 random bits. Stamps from
  /// ``HLC/next(after:now:replica:)`` strictly increase, so the pks of one
  /// replica sort in the order they were made, within one millisecond and
  /// across imports; the random bits keep two replicas' pks apart.
  package static func generate(at stamp: HLC) -> String {
    var out = [UInt8](repeating: 0, count: 26)
    appendBase32(UInt64(max(stamp.wall, 0)), digits: 10, into: &out, at: 0)
    appendBase32(UInt64(max(stamp.counter, 0)), digits: 3, into: &out, at: 10)
    var generator = SystemRandomNumberGenerator()
    appendBase32(generator.next() as UInt64, digits: 12, into: &out, at: 13)
    appendBase32(generator.next() as UInt64, digits: 1, into: &out, at: 25)
    return String(decoding: out, as: UTF8.self)
  }

  /// Writes the low `digits` × 5 bits of `value` into `out[at...]`, most
  /// significant digit first, so the text sorts as the number does.
  private static func appendBase32(_ value: UInt64, digits: Int, into out: inout [UInt8], at start: Int) {
    var value = value
    for i in stride(from: start + digits - 1, through: start, by: -1) {
      out[i] = base32[Int(value & 31)]
      value >>= 5
    }
  }
}
