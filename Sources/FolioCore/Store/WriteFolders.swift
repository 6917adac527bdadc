import FolioSystem
import Glibc

/// The folders one commit writes into, each opened once from the store root
/// without following links (``FileSystem/openDirectory(_:under:create:)``),
/// so that the checks before the durability point and the writes after it
/// go through the same verified descriptors.
final class WriteFolders {
  let root: String
  private var descriptors: [String: Int32] = [:]

  init(root: String) { self.root = root }

  deinit {
    for fd in descriptors.values where fd >= 0 { close(fd) }
  }

  /// The open folder `directory` (an absolute path in the store); nil if it
  /// is missing and `create` is false.
  /// - Throws: `UNSAFE_PATH` if a folder on the way is a link or a file.
  func descriptor(for directory: String, create: Bool) throws -> Int32? {
    if let fd = descriptors[directory], fd >= 0 { return fd }
    let relative = try FileSystem.relativePath(directory, to: root)
    guard let fd = try FileSystem.openDirectory(relative, under: root, create: create) else { return nil }
    descriptors[directory] = fd
    return fd
  }
}
