import Folio
import FolioTestSupport
import Foundation
import Testing

/// A server stopped in a process that goes on (the Swift API, not `folio
/// serve`) lets go of its port: libmicrohttpd hands the listening socket
/// back when it stops accepting, and a socket left open would still take
/// connections into its backlog and keep the port from being listened on.
@Suite struct RESTServerStopTests {
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
    running.stop()
    #expect(!LoopbackPort.canConnect(port: options.port), "port \(options.port) still listens")
    let again = try RESTServer(store: store, options: options)
    try again.start()
    #expect(LoopbackPort.canConnect(port: options.port))
    again.stop()
  }
}
