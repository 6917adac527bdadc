import Foundation

extension FileSystem {
  /// The path of this process's executable (from `/proc/self/exe`), or nil
  /// when it cannot be read.
  package static func executablePath() -> String? {
    try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
  }

  /// A path that names what the open descriptor `fd` names (through
  /// `/proc/self/fd`), for calls that take a path but where the real path
  /// is too long (a socket address) or may have moved.
  package static func descriptorPath(_ fd: Int32) -> String {
    "/proc/self/fd/\(fd)"
  }
}
