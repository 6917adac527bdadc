import FolioSystem
import Glibc

extension TableConfig {
  /// The path of document `pk`'s file inside the table's folder: its file
  /// name, under its folders in a hashed or nested table (see
  /// ``TableLayout``).
  /// - Throws: as ``PrimaryKey/fileName(for:)``.
  public func documentName(for pk: String) throws -> String {
    let file = try PrimaryKey.fileName(for: pk)
    return layout == .flat ? file : layout.folder(of: pk) + "/" + file
  }

  /// The pk of the document whose file is at `name` inside the table's
  /// folder, or nil when no document of this table lives there: not a
  /// document file name, or not in the place the layout gives its pk.
  public func pk(fromDocumentName name: some StringProtocol) -> String? {
    // Called for every file a full check lists: no splitting. The folders
    // the pk's SHA-1 gives, `/` included, must be the name's first bytes.
    let prefix = layout.folderWidths.reduce(0) { $0 + $1 + 1 }
    let utf8 = name.utf8
    guard utf8.count > prefix else { return nil }
    let fileStart = utf8.index(utf8.startIndex, offsetBy: prefix)
    let file = name[fileStart...]
    if file.utf8.contains(UInt8(ascii: "/")) { return nil }
    guard let pk = PrimaryKey.pk(fromFileName: String(file)) else { return nil }
    guard prefix > 0 else { return pk }
    var folder = [UInt8](repeating: 0, count: TableLayout.maximumFolderBytes)
    var copy = pk
    let count = copy.withUTF8 { layout.folderBytes(of: UnsafeRawBufferPointer($0), into: &folder) }
    return count == prefix && utf8[..<fileStart].elementsEqual(folder[..<count]) ? pk : nil
  }

  /// The path, relative to the store root, of document `pk`'s file.
  /// - Throws: as ``PrimaryKey/fileName(for:)``.
  public func path(of pk: String) throws -> String { path + "/" + (try documentName(for: pk)) }

  /// The path, relative to the store root, of the file `name` inside the
  /// table's folder.
  public func path(ofDocumentName name: String) -> String { path + "/" + name }

  /// The document names under the table's folder `directory` (absolute):
  /// its files, and in a hashed or nested table the files of its folders
  /// as `xx/name` or `xx/y/name`. Names that are not documents are
  /// included: callers filter with ``pk(fromDocumentName:)``. Nil when the
  /// folder does not exist. A folder that is a link is not entered: its
  /// files are not the store's (`fsck` reports it).
  package func listDocumentNames(in directory: String) throws -> [String]? {
    guard let top = try FileSystem.list(directory) else { return nil }
    guard layout != .flat else { return top }
    var names: [String] = []
    func collect(_ entries: [String], prefix: String, level: Int) throws {
      for entry in entries where layout.isFolder(entry, level: level) {
        let path = directory + "/" + prefix + entry
        guard FileSystem.isDirectoryNoFollow(path) else { continue }
        let inner = try FileSystem.list(path) ?? []
        if level + 1 == layout.depth {
          for name in inner { names.append(prefix + entry + "/" + name) }
        } else {
          try collect(inner, prefix: prefix + entry + "/", level: level + 1)
        }
      }
    }
    try collect(top, prefix: "", level: 0)
    return names
  }
}

extension TableLayout {
  /// Removes each folder of this layout under the table folder `directory`
  /// (absolute) that is empty, innermost first; one that still holds
  /// something (a file of another layout, an editor's backup) stays.
  package func removeEmptyFolders(in directory: String) {
    func sweep(_ folder: String, level: Int) {
      guard level < depth else { return }
      for name in (try? FileSystem.list(folder)) ?? [] where isFolder(name, level: level) {
        let path = folder + "/" + name
        guard FileSystem.isDirectoryNoFollow(path) else { continue }
        sweep(path, level: level + 1)
        rmdir(path)
      }
    }
    sweep(directory, level: 0)
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
  /// a hashed or nested table each of its folders (see ``FolderWatchSet``).
  package func watchSet(folder: String) -> FolderWatchSet {
    let layout = self.layout
    let levels: [@Sendable (Substring) -> Bool] = (0..<layout.depth).map { level in
      { name in layout.isFolder(name, level: level) }
    }
    return FolderWatchSet(folder: folder, levels: levels)
  }
}
