import Folio
import FolioTestSupport
import Foundation
import Testing

/// A server stopped in a process that goes on (the Swift API, not `folio
/// serve`) lets go of its port: libmicrohttpd hands the listening socket
/// back when it stops accepting, and a socket left open would still take
/// connections into its backlog and keep the port from being listened on.
@Suite struct RESTServerStopTests {
  /// The inodes of the sockets listening on 127.0.0.1 or any address at
  /// `port`, from the kernel's tables.
  static func listeningSockets(port: Int) -> Set<String> {
    var inodes = Set<String>()
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
      guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
      for line in text.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN.
        guard fields.count > 9, fields[3] == "0A",
          let local = fields[1].split(separator: ":").last, Int(local, radix: 16) == port
        else { continue }
        inodes.insert(String(fields[9]))
      }
    }
    return inodes
  }

  /// The inodes of this process's open sockets.
  static func ownSockets() -> Set<String> {
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return Set(
      fds.compactMap { fd in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd),
          target.hasPrefix("socket:[")
        else { return nil }
        return String(target.dropFirst(8).dropLast())
      })
  }

  @Test func aStoppedServerNoLongerListensAndItsPortCanBeTakenAgain() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    var options = ServeOptions()
    options.quiet = true
    var server: RESTServer?
    // A random port that another test holds is tried again with another.
    for _ in 0..<20 where server == nil {
      options.port = LoopbackPort.random()
      let candidate = try RESTServer(store: store, options: options)
      if (try? candidate.start()) != nil { server = candidate }
    }
    let running = try #require(server, "no free loopback port in 20 tries")
    #expect(LoopbackPort.canConnect(port: options.port))
    let listening = Self.listeningSockets(port: options.port)
    #expect(!listening.isDisjoint(with: Self.ownSockets()), "the server's socket is this process's")
    running.stop()
    // This process no longer holds a socket listening there (another
    // process may take the port at once: the suite runs servers on random
    // ports side by side).
    #expect(Self.listeningSockets(port: options.port).isDisjoint(with: Self.ownSockets()))
    // A child another thread forked may hold a copy until its exec closes it.
    #expect(
      eventually { Self.listeningSockets(port: options.port).isDisjoint(with: listening) },
      "port \(options.port) still listens")
    guard Self.listeningSockets(port: options.port).isEmpty else { return }
    let again = try RESTServer(store: store, options: options)
    try again.start()
    #expect(LoopbackPort.canConnect(port: options.port))
    again.stop()
  }
}
