import FolioCore
import FolioJSON
import Glibc

extension TableIndex {
  /// The entries the table's packed cache can vouch for, by pk: each record
  /// whose file has the record's stat data now, and had it past the racy
  /// margin when the bytes were known (the rule every pack record follows),
  /// with the order-key values from the packed bytes. A build takes these
  /// instead of reading those files: after an import, which writes the
  /// pack, that is every file but the last few.
  ///
  /// When a pk has several records (appended after an edit), the one that
  /// matches the file wins; two cannot, since their stat data differ.
  /// - Returns: nil when the table has no pack, or one built for another
  ///   layout.
  func entriesFromPack(dirfd: Int32) -> [String: IndexEntry]? {
    guard let pack = DocumentPack.open(packPath, signature: PackedDocuments.signature(table)) else {
      return nil
    }
    var entries: [String: IndexEntry] = [:]
    _ = pack.forEachRecord { record in
      guard !record.stat.isRacy(checkedAt: record.checkedAt) else { return }
      let pk = String(decoding: record.pk, as: UTF8.self)
      guard Self.statAt(dirfd, pk: pk, table: table) == record.stat,
        case .object(let object)? = try? JSONValue(parsing: record.document)
      else { return }
      entries[pk] = IndexEntry(stat: record.stat, checkedAt: record.checkedAt, values: values(of: object))
    }
    return entries
  }
}
