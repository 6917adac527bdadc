import Glibc

/// The loopback interface, for the servers Folio's tests and benchmarks
/// start on 127.0.0.1.
package enum Loopback {
  /// Whether something accepts TCP connections on 127.0.0.1:`port`: a
  /// plain connect, so a caller can wait for a server's state rather than
  /// for a time.
  package static func accepts(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }
}
