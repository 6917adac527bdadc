import FolioTestSupport
import Foundation
import Testing

/// scripts/package-deb.sh builds folio's Debian package from the release
/// build; lintian passes it; `dpkg -i` installs it, and folio then works
/// for a user whose environment knows nothing of the sources or the
/// toolchain; `dpkg -r` removes every file it brought.
@Suite(.serialized) struct DebianPackageCLITests {
  /// Whether this process may install packages (CI runs as root).
  static var isRoot: Bool { getuid() == 0 }

  @Test(.enabled(if: isRoot, "dpkg -i needs root"))
  func theDebInstallsWorksAndRemovesCleanly() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    let repository = InstallCLITests.repository
    // The machine's own folio package, if any, is not this test's to replace.
    let before = try FolioRunner.shellOutput("dpkg-query -W -f='${Status}' folio 2>/dev/null", in: "/").output
    try #require(
      !before.contains("installed"), "a folio package is installed here already; remove it to run this test")

    // The release build scripts/test.sh makes before the tests: SwiftPM
    // cannot build while the tests hold its lock on .build.
    let release = repository + "/.build/release/folio"
    try #require(
      FileManager.default.isExecutableFile(atPath: release),
      "no release build at \(release): run bash scripts/build-release.sh --product folio first")
    let (built, output) = try FolioRunner.shellOutput(
      "bash scripts/package-deb.sh --binary '\(release)' --lintian --output '\(scratch.path)' 2>&1",
      in: repository)
    try #require(built == 0, "\(output)")
    let deb = try #require(output.split(separator: "\n").last.map(String.init))
    #expect(deb.hasPrefix(scratch.path + "/folio_") && deb.hasSuffix(".deb"), "\(output)")

    // The control fields.
    func field(_ name: String) throws -> String {
      try FolioRunner.shellOutput("dpkg-deb -f '\(deb)' \(name)", in: "/").output
        .trimmingCharacters(in: .whitespacesAndNewlines)
    }
    let version = try FolioRunner.shellOutput("'\(release)' --version", in: "/").output
      .split(separator: " ")[1].trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(try field("Package") == "folio")
    #expect(try field("Version") == version)
    #expect(
      try field("Architecture")
        == FolioRunner.shellOutput("dpkg --print-architecture", in: "/").output
        .trimmingCharacters(in: .newlines))
    let depends = try field("Depends").split(separator: ",").map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    #expect(depends.count == 4, "\(depends)")
    #expect(depends.first?.hasPrefix("libc6 (>= 2.") == true, "\(depends)")
    #expect(Array(depends.dropFirst()) == ["libgit2-1.5", "libmicrohttpd12", "git"], "\(depends)")
    // Runtime libraries only: a -dev package would pull in headers and a
    // compiler's worth of dependencies.
    #expect(!depends.contains { $0.contains("-dev") })
    #expect(try field("Description").hasPrefix("database kept as JSON files in a git repository"))

    // The file list: the binary, completions, a man page per command, the
    // copyright, the changelog and lintian's overrides; nothing else.
    let listed = try FolioRunner.shellOutput(
      "dpkg-deb -c '\(deb)' | awk '{print $6}' | grep -v '/$'", in: "/"
    )
    .output.split(separator: "\n").map(String.init)
    let commands = try FolioRunner.shellOutput("'\(FolioRunner.binary)' __complete 1 folio ''", in: "/")
      .output
      .split(separator: "\n").map(String.init).filter { $0 != "help" }
    var expected: Set<String> = [
      "./usr/bin/folio", "./usr/share/bash-completion/completions/folio",
      "./usr/share/zsh/vendor-completions/_folio", "./usr/share/fish/vendor_completions.d/folio.fish",
      "./usr/share/man/man1/folio.1.gz", "./usr/share/doc/folio/copyright",
      "./usr/share/doc/folio/changelog.gz",
      "./usr/share/lintian/overrides/folio",
    ]
    for command in commands { expected.insert("./usr/share/man/man1/folio-\(command).1.gz") }
    #expect(
      Set(listed) == expected,
      "extra: \(Set(listed).subtracting(expected)), missing: \(expected.subtracting(listed))")
    #expect(commands.contains("query") && commands.count > 20, "\(commands)")

    // Installed, it is the system's folio.
    // Removed again whatever happens below, so the machine is left as found.
    var isInstalled = false
    defer { if isInstalled { _ = try? FolioRunner.shellOutput("dpkg -r folio 2>&1", in: "/") } }
    let (installed, log) = try FolioRunner.shellOutput("dpkg -i '\(deb)' 2>&1", in: "/")
    isInstalled = installed == 0
    try #require(installed == 0, "\(log)")
    #expect(try FolioRunner.shellOutput("dpkg -L folio", in: "/").output.contains("/usr/bin/folio\n"))

    // A user with nothing of the build in their environment: PATH holds
    // only the system's folders, no library path, the toolchain unseen.
    let (home, store) = (scratch.path + "/home", scratch.path + "/store")
    for folder in [home, store] {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
    try scratch.write("store/birds.csv", "id,name,weight\nb1,wren,10\nb2,heron,1500\nb3,robin,NA\n")
    #expect(
      try FolioRunner.shell(
        "chmod 755 '\(scratch.path)' && chown -R 65534:65534 '\(home)' '\(store)'", in: "/") == 0)
    func run(_ command: String) throws -> String {
      let (status, output) = try InstallCLITests.asNobody(command, prefix: "/usr", home: home, in: store)
      #expect(status == 0, "\(command): \(output)")
      return output
    }
    #expect(try run("command -v folio") == "/usr/bin/folio\n")
    #expect(try run("folio --version").hasPrefix("folio \(version)"))
    _ = try run(
      "folio init && folio tables add birds --layout flat && folio import birds birds.csv --null NA")
    let heavy = try run("folio query birds --where 'weight > 100'")
    #expect(heavy == #"{"id":"b2","name":"heron","weight":1500}"# + "\n", "\(heavy)")
    // The man page is found by name, and bash completes from the system's folder.
    let page = try run("MANWIDTH=200 man folio-query | col -bx")
    #expect(page.contains("folio query"), "\(page)")
    let completed = try run(
      "source /usr/share/bash-completion/completions/folio && COMP_WORDS=(folio get bi); COMP_CWORD=2; _folio; echo \"${COMPREPLY[*]}\""
    )
    #expect(completed == "birds\n", "\(completed)")

    let (removed, removal) = try FolioRunner.shellOutput("dpkg -r folio 2>&1", in: "/")
    isInstalled = removed != 0
    #expect(removed == 0, "\(removal)")
    for file in expected {
      #expect(!FileManager.default.fileExists(atPath: String(file.dropFirst())), "\(file) left after dpkg -r")
    }
  }
}
