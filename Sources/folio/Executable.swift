import FolioSystem

/// This program's own path, so git can call it back as the merge driver
/// even when it is not on PATH.
enum Executable {
  static var path: String { FileSystem.executablePath() ?? "folio" }
}
