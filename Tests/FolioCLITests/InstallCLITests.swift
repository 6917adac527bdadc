import FolioTestSupport
import Foundation
import Testing

/// scripts/install.sh into a temporary prefix, used as a user would: a
/// non-root user whose PATH holds only the prefix and /usr/bin:/bin runs
/// folio, its completions and its man pages, then uninstalls.
@Suite struct InstallCLITests {
  /// The package's root, from this file's place in it.
  static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

  /// Runs `command` with bash as user nobody, with only `PATH` (the prefix
  /// first), `HOME` and a git identity in its environment.
  static func asNobody(_ command: String, prefix: String, home: String, in directory: String) throws -> (
    status: Int32, output: String
  ) {
    let environment = [
      "PATH=\(prefix)/bin:/usr/bin:/bin", "HOME=\(home)", "GIT_AUTHOR_NAME=n", "GIT_AUTHOR_EMAIL=n@n",
      "GIT_COMMITTER_NAME=n", "GIT_COMMITTER_EMAIL=n@n", "FOLIO_INDEX_DAEMON=off", "LC_ALL=C.UTF-8",
    ].map { "'\($0)'" }.joined(separator: " ")
    let quoted = "'" + command.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    return try FolioRunner.shellOutput(
      "setpriv --reuid=65534 --regid=65534 --clear-groups env -i \(environment) bash -c \(quoted) 2>&1",
      in: directory)
  }

  /// scripts/build-info.sh's object names the commit (or the tag), and
  /// linked beside CBuildInfo's weak answer it wins, as in a release build.
  @Test func theBuildInfoObjectStampsTheCommit() throws {
    let (status, flags) = try FolioRunner.shellOutput("bash scripts/build-info.sh", in: Self.repository)
    #expect(status == 0, "\(flags)")
    let object = Self.repository + "/.build/build-info.o"
    #expect(flags.trimmingCharacters(in: .newlines) == "-Xlinker " + object, "\(flags)")
    let commit = try FolioRunner.shellOutput(
      "git describe --tags --exact-match HEAD 2>/dev/null || git rev-parse --short=12 HEAD",
      in: Self.repository
    ).output.trimmingCharacters(in: .newlines)
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    try scratch.write(
      "main.c",
      "#include <stdio.h>\nconst char *folio_build_description(void);\nint main(void) { puts(folio_build_description()); return 0; }\n"
    )
    let source = Self.repository + "/Sources/CBuildInfo"
    for (extra, expected) in [("", ""), (object, commit)] {
      let (built, output) = try FolioRunner.shellOutput(
        "\"$(command -v clang || command -v cc)\" -I '\(source)/include' -o stamped main.c '\(source)/build_info.c' \(extra) && ./stamped",
        in: scratch.path)
      #expect(built == 0, "\(output)")
      let printed = output.trimmingCharacters(in: .newlines)
      #expect(printed == expected || printed == expected + "-dirty", "\(extra): \(output)")
    }
  }

  @Test func installedFolioRunsForAnotherUserWithCompletionsAndManPages() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    let (prefix, home, store) = (scratch.path + "/prefix", scratch.path + "/home", scratch.path + "/store")
    for folder in [prefix, home, store] {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
    try scratch.write("store/birds.csv", "id,name,weight\nb1,wren,10\nb2,heron,1500\nb3,robin,NA\n")
    #expect(try FolioRunner.shell("chown -R 65534:65534 '\(scratch.path)'", in: "/") == 0)
    func run(_ command: String, in directory: String? = nil) throws -> String {
      let (status, output) = try Self.asNobody(command, prefix: prefix, home: home, in: directory ?? store)
      #expect(status == 0, "\(command): \(output)")
      return output
    }

    let installed = try run(
      "bash '\(Self.repository)/scripts/install.sh' --prefix '\(prefix)' --binary '\(FolioRunner.binary)'")
    #expect(installed.contains("installed folio 0.1.0"), "\(installed)")
    #expect(try run("command -v folio") == prefix + "/bin/folio\n")
    #expect(try run("folio --version").hasPrefix("folio "))
    _ = try run("folio init && folio tables add birds --layout flat && folio import birds birds.csv")
    let heavy = try run("folio query birds --where 'weight > 100'")
    #expect(heavy == #"{"id":"b2","name":"heron","weight":1500}"# + "\n", "\(heavy)")

    // Completion, as bash runs it: the command, then a table and a key.
    let completion = prefix + "/share/bash-completion/completions/folio"
    let completed = try run(
      "source '\(completion)' && complete -p folio && "
        + "COMP_WORDS=(folio que); COMP_CWORD=1; _folio; echo \"1:${COMPREPLY[*]}\"; "
        + "COMP_WORDS=(folio get bi); COMP_CWORD=2; _folio; echo \"2:${COMPREPLY[*]}\"; "
        + "COMP_WORDS=(folio get birds b); COMP_CWORD=3; _folio; echo \"3:${COMPREPLY[*]}\"")
    #expect(completed.contains("complete -o default -F _folio folio"), "\(completed)")
    #expect(completed.contains("1:query\n") && completed.contains("2:birds\n"), "\(completed)")
    #expect(completed.contains("3:b1 b2 b3\n"), "\(completed)")
    for (file, shell) in [
      ("share/zsh/site-functions/_folio", "zsh"), ("share/fish/vendor_completions.d/folio.fish", "fish"),
    ] {
      let script = try String(contentsOfFile: prefix + "/" + file, encoding: .utf8)
      #expect(script.contains("folio __complete"), "\(shell): \(script)")
    }

    // The man page says what the help says, line for line.
    let help = try run("folio help query").split(separator: "\n").map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    let page = try run("MANWIDTH=200 man -l '\(prefix)/share/man/man1/folio-query.1' | col -bx")
      .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    let missing = help.filter { !$0.isEmpty && !page.contains($0) }
    #expect(missing.isEmpty, "lines of 'folio help query' not in its man page: \(missing)")

    let removed = try run("bash '\(Self.repository)/scripts/install.sh' --prefix '\(prefix)' --uninstall")
    #expect(removed.contains("removed folio from \(prefix)"))
    let left = try FolioRunner.shellOutput("find '\(prefix)' -type f", in: "/").output
    #expect(left.isEmpty, "left after --uninstall: \(left)")
  }
}
