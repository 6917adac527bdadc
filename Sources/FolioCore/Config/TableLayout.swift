import FolioSystem
import Glibc

/// How a table spreads its document files over its folder.
///
/// A git tree is one object per folder, so a commit that changes ten
/// documents of a flat 300,000-document table writes a 12 MB tree, and a
/// fetch sends it. A hashed table keeps its documents in 256 subfolders,
/// so the same commit writes ten small trees and the table's tree of 256
/// entries.
///
/// ```
/// todos/a.json        flat
/// todos/86/a.json     hashed: 86 is the first byte of SHA-1("a"), in hex
/// ```
///
/// The subfolder follows from the pk alone (`printf %s a | sha1sum | cut -c1-2`),
/// so every replica puts a document in the same place, and `folio get`,
/// `put`, `rm`, queries and the watcher hide it. `folio tables layout`
/// converts a table, as one commit of moves.
public enum TableLayout: String, Sendable, Hashable, CaseIterable {
  /// Every document file directly in the table's folder.
  case flat
  /// Each document file in the subfolder named by the first byte of the
  /// SHA-1 of its pk's UTF-8, as two lowercase hex digits.
  case hashed

  /// The layout `TableConfig`'s initializer gives a table when none is
  /// named: `FOLIO_TABLE_LAYOUT` (`flat` or `hashed`) when set, else flat.
  /// A `folio.yaml` entry without `layout:` is always flat, so existing
  /// stores read as they were written.
  public static let `default`: TableLayout = environment ?? .flat

  /// The layout of a table the command line creates (`folio init --table`,
  /// `folio tables add`, `folio import` into a new table):
  /// `FOLIO_TABLE_LAYOUT` when set, else hashed, the layout that keeps a
  /// small change small as the table grows.
  public static let forNewTables: TableLayout = environment ?? .hashed

  private static let environment: TableLayout? = getenv("FOLIO_TABLE_LAYOUT").flatMap {
    TableLayout(rawValue: String(cString: $0))
  }

  /// The subfolder of document `pk` in a hashed table: two lowercase hex
  /// digits.
  public static func bucket(of pk: String) -> String {
    var pk = pk
    let (high, low) = pk.withUTF8 { bucketDigits(of: UnsafeRawBufferPointer($0)) }
    return String(decoding: [high, low], as: UTF8.self)
  }

  /// The two hex digits of ``bucket(of:)`` for the pk whose UTF-8 is
  /// `pk`, without allocating.
  package static func bucketDigits(of pk: UnsafeRawBufferPointer) -> (UInt8, UInt8) {
    var hasher = SHA1()
    hasher.update(pk)
    let first = hasher.finish()[0]
    return (hexDigit(first >> 4), hexDigit(first & 0xF))
  }

  private static func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
  }

  /// Whether `name` is a subfolder name a hashed table uses.
  public static func isBucket(_ name: some StringProtocol) -> Bool {
    let utf8 = name.utf8
    return utf8.count == 2
      && utf8.allSatisfy {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
          || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
      }
  }
}
