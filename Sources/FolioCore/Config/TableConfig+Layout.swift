import FolioSystem

extension TableConfig {
  /// The path of document `pk`'s file inside the table's folder: its file
  /// name, under its subfolder in a hashed table (see ``TableLayout``).
  /// - Throws: as ``PrimaryKey/fileName(for:)``.
  public func documentName(for pk: String) throws -> String {
    let file = try PrimaryKey.fileName(for: pk)
    switch layout {
    case .flat: return file
    case .hashed: return TableLayout.bucket(of: pk) + "/" + file
    }
  }

  /// The pk of the document whose file is at `name` inside the table's
  /// folder, or nil when no document of this table lives there: not a
  /// document file name, or not in the place the layout gives its pk.
  public func pk(fromDocumentName name: some StringProtocol) -> String? {
    switch layout {
    case .flat:
      if name.utf8.contains(UInt8(ascii: "/")) { return nil }
      return PrimaryKey.pk(fromFileName: String(name))
    case .hashed:
      let utf8 = name.utf8
      guard utf8.count > 3, utf8[utf8.index(utf8.startIndex, offsetBy: 2)] == UInt8(ascii: "/") else {
        return nil
      }
      let bucket = name.prefix(2)
      guard TableLayout.isBucket(bucket), let pk = PrimaryKey.pk(fromFileName: String(name.dropFirst(3))),
        TableLayout.bucket(of: pk) == bucket
      else { return nil }
      return pk
    }
  }

  /// The path, relative to the store root, of document `pk`'s file.
  /// - Throws: as ``PrimaryKey/fileName(for:)``.
  public func path(of pk: String) throws -> String { path + "/" + (try documentName(for: pk)) }

  /// The path, relative to the store root, of the file `name` inside the
  /// table's folder.
  public func path(ofDocumentName name: String) -> String { path + "/" + name }

  /// The document names under the table's folder `directory` (absolute):
  /// its files, and in a hashed table the files of its two-hex-digit
  /// subfolders as `xx/name`. Names that are not documents are included:
  /// callers filter with ``pk(fromDocumentName:)``. Nil when the folder
  /// does not exist. A subfolder that is a link is not entered: its
  /// files are not the store's (`fsck` reports it).
  package func listDocumentNames(in directory: String) throws -> [String]? {
    guard let top = try FileSystem.list(directory) else { return nil }
    guard layout == .hashed else { return top }
    var names: [String] = []
    for entry in top
    where TableLayout.isBucket(entry) && FileSystem.isDirectoryNoFollow(directory + "/" + entry) {
      for name in try FileSystem.list(directory + "/" + entry) ?? [] { names.append(entry + "/" + name) }
    }
    return names
  }
}

extension Config {
  /// The table and pk of the document file at `path` (relative to the
  /// store root), or nil when no document lives there (see
  /// ``TableConfig/pk(fromDocumentName:)``).
  public func document(atPath path: String) -> (table: TableConfig, pk: String)? {
    guard path.hasSuffix(PrimaryKey.fileExtension) else { return nil }
    for table in tables where path.hasPrefix(table.path + "/") {
      let name = String(decoding: path.utf8.dropFirst(table.path.utf8.count + 1), as: UTF8.self)
      return table.pk(fromDocumentName: name).map { (table, $0) }
    }
    return nil
  }
}

extension TableConfig {
  /// The inotify watches a folder of this table needs: the folder, and in
  /// a hashed table each subfolder (see ``FolderWatchSet``).
  package func watchSet(folder: String) -> FolderWatchSet {
    guard layout == .hashed else { return FolderWatchSet(folder: folder, isSubfolder: nil) }
    let isBucket: @Sendable (Substring) -> Bool = { name in TableLayout.isBucket(name) }
    return FolderWatchSet(folder: folder, isSubfolder: isBucket)
  }
}
