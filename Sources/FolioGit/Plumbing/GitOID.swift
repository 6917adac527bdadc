internal import Clibgit2
import FolioSystem

/// A git object id (SHA-1), copied out of libgit2 so it can travel freely.
package struct GitOID: Hashable, Sendable, CustomStringConvertible {
  package var bytes: [UInt8]

  init(_ oid: git_oid) {
    var copy = oid
    bytes = withUnsafeBytes(of: &copy.id) { Array($0) }
  }

  /// An id from its 20 raw bytes.
  package init(bytes: [UInt8]) {
    precondition(bytes.count == 20, "a git object id has 20 bytes")
    self.bytes = bytes
  }

  init?(hex: String) {
    var oid = git_oid()
    guard git_oid_fromstr(&oid, hex) == 0 else { return nil }
    self.init(oid)
  }

  /// The libgit2 form, for passing back into C.
  var raw: git_oid {
    var oid = git_oid()
    withUnsafeMutableBytes(of: &oid.id) { $0.copyBytes(from: bytes) }
    return oid
  }

  /// Forty hex digits.
  package var description: String { SHA1.hex(bytes) }
}
