import FolioTestSupport
import Foundation
import Testing

/// A reader that stops reading (`| head`) ends a streaming command quietly
/// with status 0, as git's do: the write's `EPIPE` is told by its errno,
/// not by its message's words, whatever the locale.
struct ClosedPipeCLITests {
  @Test func aReaderThatLeavesEndsTheStreamQuietly() throws {
    let scratch = try CLIScratch(yaml: nil)
    defer { scratch.remove() }
    #expect(try scratch.folio("init").status == 0)
    // More than a pipe holds (64 KiB), so the writer is still writing
    // when the reader leaves.
    let rows = (0..<20_000).map { #"{"id": "r\#($0)", "text": "row \#($0) of a table longer than a pipe"}"# }
    try scratch.write("rows.ndjson", rows.joined(separator: "\n") + "\n")
    let imported = try scratch.folio("import", "rows", "rows.ndjson", "--create")
    try #require(imported.status == 0, "\(imported.stderr)")
    for command in ["export rows", "export rows --format csv", "query rows", "log rows"] {
      let script = """
        '\(FolioRunner.binary)' \(command) 2>stderr.txt | head -c 100 >/dev/null
        echo "status ${PIPESTATUS[0]}"; cat stderr.txt
        """
      let (status, output) = try FolioRunner.shellOutput(
        "bash -c '\(script.replacingOccurrences(of: "'", with: #"'\''"#))'", in: scratch.path)
      #expect(status == 0)
      #expect(output == "status 0\n", "folio \(command): \(output)")
    }
  }
}
