import FolioTestSupport
import Foundation
import Testing

/// libgit2 and libmicrohttpd are opened on first use, not at start: the
/// commands that touch neither never load them, and one that cannot load
/// them says so and leaves the store as it was.
struct LazyLibraryCLITests {
  /// The shared libraries a run of `folio ARGUMENTS` opened, as the dynamic
  /// loader reports them (`LD_DEBUG=files`), and its result.
  private func loaded(_ arguments: [String], in scratch: CLIScratch) throws -> (
    Set<String>, FolioRunner.Result
  ) {
    let result = try FolioRunner.run(arguments, in: scratch.path, environment: ["LD_DEBUG": "files"])
    var names = Set<String>()
    for line in result.stderr.split(separator: "\n") {
      guard let range = line.range(of: "file=") else { continue }
      names.insert(String(line[range.upperBound...].prefix { $0 != " " && $0 != "[" }))
    }
    return (names, result)
  }

  @Test func readsAndTheVersionStartWithoutGitOrHTTP() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    #expect(try scratch.folio("put", "todos", "a", input: #"{"title":"x"}"#).status == 0)
    for arguments in [
      ["--version"], ["get", "todos", "a"], ["query", "todos"], ["export", "todos"], ["log"],
    ] {
      let (names, result) = try loaded(arguments, in: scratch)
      #expect(result.status == 0, "\(arguments): \(result.stderr.suffix(500))")
      #expect(!names.isEmpty, "\(arguments): LD_DEBUG reported nothing")
      #expect(
        !names.contains { $0.hasPrefix("libgit2") || $0.hasPrefix("libmicrohttpd") }, "\(arguments): \(names)"
      )
    }
    // A command that writes git objects does open libgit2.
    let (names, result) = try loaded(["commit", "-m", "one"], in: scratch)
    #expect(result.status == 0, "\(result.stderr.suffix(500))")
    #expect(names.contains { $0.hasPrefix("libgit2") }, "\(names)")
  }

  /// A libgit2 that cannot be loaded (here a file that is not a library,
  /// found first through LD_LIBRARY_PATH) fails the command that needs it
  /// with the cause and the package to install; reads still work.
  @Test func aLibraryThatCannotBeLoadedIsAClearError() throws {
    let scratch = try CLIScratch()
    defer { scratch.remove() }
    try scratch.folio("init")
    #expect(try scratch.folio("put", "todos", "a", input: #"{"title":"x"}"#).status == 0)
    let broken = scratch.path + "/broken-libraries"
    try FileManager.default.createDirectory(atPath: broken, withIntermediateDirectories: true)
    for name in ["libgit2.so.1.5", "libmicrohttpd.so.12"] {
      try "not a library\n".write(toFile: broken + "/" + name, atomically: true, encoding: .utf8)
    }
    let environment = ["LD_LIBRARY_PATH": broken]
    let commit = try FolioRunner.run(["commit", "-m", "one"], in: scratch.path, environment: environment)
    #expect(commit.status != 0)
    #expect(commit.stderr.contains("GIT: cannot load libgit2"), "\(commit.stderr)")
    #expect(commit.stderr.contains("apt-get install libgit2-1.5"), "\(commit.stderr)")
    // The port is taken, so a serve that did load its library would stop
    // at the bind rather than serve on.
    let (listener, port) = try takenLoopbackPort()
    defer { close(listener) }
    let serve = try FolioRunner.run(
      ["serve", "--port", "\(port)"], in: scratch.path, environment: environment)
    #expect(serve.status != 0)
    #expect(serve.stderr.contains("cannot load libmicrohttpd"), "\(serve.stderr)")
    #expect(serve.stderr.contains("apt-get install libmicrohttpd12"), "\(serve.stderr)")
    let get = try FolioRunner.run(["get", "todos", "a"], in: scratch.path, environment: environment)
    #expect(get.status == 0 && get.stdout.contains("\"x\""), "\(get.stderr)")
    // With the library back, the same commit goes through.
    #expect(try scratch.folio("commit", "-m", "one").status == 0)
  }

  /// A socket listening on 127.0.0.1 at a port the kernel picked.
  private func takenLoopbackPort() throws -> (Int32, Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        bind(fd, pointer, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, pointer, &length) == 0
      }
    }
    try #require(fd >= 0 && bound)
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
  }
}
