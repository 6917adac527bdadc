import Testing

@testable import FolioGit
@testable import FolioSystem

/// How git's failures are told apart, from the words git prints (with
/// `LC_ALL=C`) for cases a test server cannot easily be made to give: each
/// gets its own code and fix, and only the network is the network.
struct GitFailureClassTests {
  static func classify(_ stderr: String) -> FolioError {
    let result = Subprocess.Result(status: 128, stdout: [], stderr: Array(stderr.utf8))
    return SystemGit(gitDirectory: nil).error(result, remote: "origin", url: "git://127.0.0.1/r.git")
  }

  @Test(arguments: [
    (
      "error: cannot lock ref 'refs/folio/incoming/origin/main': is at 1234 but expected 5678\n",
      FolioError.Code.locked, "another git process is updating refs/folio/incoming/origin/main"
    ),
    (
      "fatal: Unable to create '/s/.git/refs/heads/main.lock': File exists.\n", .locked,
      "another git process is updating /s/.git/refs/heads/main"
    ),
    (
      "error: dst refspec refs/heads/main matches more than one\nerror: failed to push some refs\n", .remote,
      "more than one ref the branch's name could mean"
    ),
    (
      "fatal: the remote end hung up unexpectedly\nerror: filtering not recognized by server, ignoring\n",
      .remote,
      "uploadpack.allowFilter=true"
    ),
    (
      "fatal: remote error: access denied or repository not exported: /r.git\n", .remote,
      "no git repository at remote 'origin'"
    ),
    (
      "fatal: unable to connect to 127.0.0.1:\ngit: Connection refused\n", .remote,
      "check the URL and your network"
    ),
  ])
  func eachFailureHasItsCause(_ stderr: String, _ code: FolioError.Code, _ words: String) {
    let error = Self.classify(stderr)
    #expect(error.code == code, "\(error)")
    #expect(error.message.contains(words), "\(error.message)")
  }
}
