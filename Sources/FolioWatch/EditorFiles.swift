import FolioCore

/// Tells documents from the other files editors and tools leave in a table
/// folder while they save: swap files, backups, lock files and temp files.
///
/// A name is a document only if it is a canonical `<pk>.json` name (which
/// already rules out hidden names such as `.a.json.swp`, `.#a.json` and
/// Folio's own `.a.json.folio-tmp`). The explicit list below catches the
/// patterns that could otherwise end in `.json`, and documents what the
/// watcher deliberately ignores.
enum EditorFiles {
  /// Suffixes of backup, swap and temp files (vim, emacs, JetBrains, VS Code,
  /// Kate, gedit, patch, rsync, and tools that write `name.tmp`).
  static let ignoredSuffixes = [
    "~", ".swp", ".swo", ".swx", ".swn", ".bak", ".orig", ".rej", ".tmp", ".temp", ".part",
    ".crswap", "___jb_tmp___", "___jb_old___", ".kate-swp", ".folio-tmp",
  ]

  /// Prefixes of lock, autosave and temp files (emacs `.#x` and `#x#`,
  /// hidden files such as gedit's `.goutputstream-*`, Office's `~$x`).
  /// `sed -i` writes `sedXXXXXX`, which has no `.json` suffix.
  static let ignoredPrefixes = [".", "#", "~$"]

  /// Names some editors use as a scratch file (vim writes and deletes `4913`
  /// to test that the folder is writable).
  static let ignoredNames: Set<String> = ["4913", "5036"]

  /// The pk of the document file at `name` inside the folder of `table`
  /// (`a.json`, or `86/a.json` in a hashed table), or nil when the watcher
  /// must ignore the file.
  static func documentPK(table: TableConfig, name: String) -> String? {
    let file = String(name.split(separator: "/").last ?? "")
    if ignoredNames.contains(file) { return nil }
    if ignoredSuffixes.contains(where: file.hasSuffix) { return nil }
    if ignoredPrefixes.contains(where: file.hasPrefix) { return nil }
    return table.pk(fromDocumentName: name)
  }
}
