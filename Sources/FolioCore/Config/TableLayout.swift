import FolioSystem
import Glibc

/// How a table spreads its document files over its folder.
///
/// A git tree is one object per folder, so a commit that changes ten
/// documents of a flat 300,000-document table writes a 12 MB tree, and a
/// fetch sends it. A nested table keeps its documents in 4,096 folders two
/// levels down, so the same commit writes ten trees of about 70 entries,
/// ten of 16 and the table's tree of 256, whatever the table's size.
///
/// ```
/// todos/a.json          flat
/// todos/86/a.json       hashed: 86 is the first byte of SHA-1("a"), in hex
/// todos/86/f/a.json     nested: f is the SHA-1's third hex digit
/// ```
///
/// The folders follow from the pk alone (`printf %s a | sha1sum | cut -c1-3`),
/// so every replica puts a document in the same place, and `folio get`,
/// `put`, `rm`, queries and the watcher hide them. `folio tables layout`
/// converts a table, as one commit of moves.
public enum TableLayout: String, Sendable, Hashable, CaseIterable {
  /// Every document file directly in the table's folder.
  case flat
  /// Each document file in the subfolder named by the first byte of the
  /// SHA-1 of its pk's UTF-8, as two lowercase hex digits (256 folders).
  case hashed
  /// Each document file two levels down: in the folder named by the first
  /// two hex digits of the SHA-1 of its pk's UTF-8, then in the one named
  /// by the third (4,096 folders in all).
  case nested

  /// The layout `TableConfig`'s initializer gives a table when none is
  /// named: ``FolioSettings/tableLayout`` when set, else flat. A
  /// `folio.yaml` entry without `layout:` is always flat, so existing
  /// stores read as they were written.
  public static var `default`: TableLayout { FolioSettings.current.tableLayout ?? .flat }

  /// The layout of a table the command line creates (`folio init --table`,
  /// `folio tables add`, `folio import` into a new table):
  /// ``FolioSettings/tableLayout`` when set, else nested, the layout that
  /// keeps a small change small as the table grows.
  public static var forNewTables: TableLayout { FolioSettings.current.tableLayout ?? .nested }

  /// The number of hex digits in each folder name on the way from the
  /// table's folder to a document file, outermost first.
  public var folderWidths: [Int] {
    switch self {
    case .flat: return []
    case .hashed: return [2]
    case .nested: return [2, 1]
    }
  }

  /// How many folders the layout has at most below the table's: 0, 256,
  /// or 256 + 4,096.
  public var folderCount: Int {
    folderWidths.reduce((total: 0, level: 1)) { sum, width in
      let level = sum.level << (4 * width)
      return (sum.total + level, level)
    }.total
  }

  /// How many levels of folders lie between the table's folder and a
  /// document file.
  public var depth: Int { folderWidths.count }

  /// The folder of document `pk` inside the table's folder: "" when flat,
  /// else its folder names joined by `/` (`86`, `86/f`).
  public func folder(of pk: String) -> String {
    guard self != .flat else { return "" }
    var pk = pk
    var bytes = [UInt8](repeating: 0, count: Self.maximumFolderBytes)
    let count = pk.withUTF8 { folderBytes(of: UnsafeRawBufferPointer($0), into: &bytes) }
    return String(decoding: bytes[..<(count - 1)], as: UTF8.self)
  }

  /// Writes the folder of the pk whose UTF-8 is `pk` into `out`, followed
  /// by `/`, without allocating (`86/`, `86/f/`).
  /// - Returns: the number of bytes written; 0 when flat.
  package func folderBytes(of pk: UnsafeRawBufferPointer, into out: inout [UInt8]) -> Int {
    guard self != .flat else { return 0 }
    var hasher = SHA1()
    hasher.update(pk)
    let digest = hasher.finish()
    out[0] = Self.hexDigit(digest[0] >> 4)
    out[1] = Self.hexDigit(digest[0] & 0xF)
    out[2] = UInt8(ascii: "/")
    guard self == .nested else { return 3 }
    out[3] = Self.hexDigit(digest[1] >> 4)
    out[4] = UInt8(ascii: "/")
    return 5
  }

  /// The longest ``folderBytes(of:into:)`` writes.
  package static let maximumFolderBytes = 5

  private static func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
  }

  /// Whether `name` is a folder name this layout uses at `level` (0 for
  /// the folders directly in the table's folder).
  public func isFolder(_ name: some StringProtocol, level: Int) -> Bool {
    let widths = folderWidths
    guard level < widths.count else { return false }
    let utf8 = name.utf8
    return utf8.count == widths[level]
      && utf8.allSatisfy {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
          || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
      }
  }
}
