import FolioTestSupport
import Foundation
import Glibc
import Testing

/// Credentials against a real git smart-HTTP server (`git http-backend`)
/// that wants HTTP basic auth, served on 127.0.0.1 by the test.
struct CredentialsCLITests {
  @Test func httpsStyleTokenFromTheEnvironmentIsUsedAndNeverPrinted() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    #expect(try FolioRunner.shell("git init -q --bare remote.git", in: scratch.path) == 0)
    let server = try GitHTTPServer(root: scratch.path, user: "alice", password: "s3cret-token")
    defer { server.stop() }
    let url = server.url("remote.git")

    try scratch.write("a/folio.yaml", CLIScratch.yaml)
    let a = scratch.path + "/a"
    #expect(try FolioRunner.run(["init"], in: a).status == 0)
    #expect(try FolioRunner.shell("git remote add origin \(url)", in: a) == 0)
    #expect(try FolioRunner.run(["put", "todos", "t", "-"], in: a, input: #"{"views": 1}"#).status == 0)

    // No credentials: a clear error that says what to set.
    let empty = [
      "FOLIO_GIT_USERNAME": "", "FOLIO_GIT_TOKEN": "", "FOLIO_GIT_PASSWORD": "", "SSH_AUTH_SOCK": "",
    ]
    let refused = try FolioRunner.run(["sync"], in: a, environment: empty)
    #expect(refused.status != 0)
    #expect(refused.stderr.contains("CREDENTIALS"), "\(refused.stderr)")
    #expect(refused.stderr.contains("FOLIO_GIT_USERNAME and FOLIO_GIT_TOKEN"), "\(refused.stderr)")

    // A wrong token is refused too, and the secret is not echoed.
    let wrong = try FolioRunner.run(
      ["sync"], in: a, environment: ["FOLIO_GIT_USERNAME": "alice", "FOLIO_GIT_TOKEN": "not-it"])
    #expect(wrong.status != 0)
    #expect(!wrong.stderr.contains("not-it") && !wrong.stdout.contains("not-it"))

    // The right one: the push lands, and a clone with it gets the document.
    let good = ["FOLIO_GIT_USERNAME": "alice", "FOLIO_GIT_TOKEN": "s3cret-token"]
    let pushed = try FolioRunner.run(["sync"], in: a, environment: good)
    #expect(pushed.status == 0, "\(pushed.stderr)")
    #expect(!pushed.stderr.contains("s3cret") && !pushed.stdout.contains("s3cret"))
    let cloned = try FolioRunner.run(["clone", url, "b"], in: scratch.path, environment: good)
    #expect(cloned.status == 0, "\(cloned.stderr)")
    #expect(scratch.read("b/data/todos/t.json")?.contains("\"views\": 1") == true)
  }
}
