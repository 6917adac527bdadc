import FolioCore
import FolioJSON
import FolioSystem

extension Store {
  /// The `diff.folio.textconv` command git runs on table documents, given
  /// the program to call. When the program is missing, git shows the file
  /// as it is: plain git keeps working on a machine without Folio.
  static func diffTextconvCommand(program: String) -> String {
    let quoted = shellWord(program)
    return "f() { if command -v \(quoted) >/dev/null 2>&1; then \(quoted) diff-textconv \"$1\"; "
      + "else cat \"$1\"; fi; }; f"
  }

  /// Registers Folio's git diff driver in `.git/config`, so `git diff`,
  /// `git show` and `git log -p` show a table document as one line per
  /// JSON path (``textconv(_:)``), routed by `.gitattributes` (`diff=folio`).
  /// Running it again changes nothing.
  /// - Parameter program: the `folio` executable (default: `folio` on PATH).
  public func registerDiffDriver(program: String = "folio") throws {
    let repository = try openRepository()
    let command = Store.diffTextconvCommand(program: program)
    if repository.config("diff.folio.textconv") != command {
      try repository.setConfig("diff.folio.textconv", command)
    }
  }

  /// A document as git's diff driver shows it: one `path = value` line per
  /// leaf (`/title = "Buy milk"`), in path order, so a line diff of two
  /// versions is a diff by path. Values are compact JSON; arrays and `{}`
  /// are leaves. Bytes that are not a JSON object come back as they are.
  public static func textconv(_ bytes: [UInt8]) -> [UInt8] {
    guard let value = try? JSONValue(parsing: bytes), case .object(let object) = value else { return bytes }
    var out: [UInt8] = []
    for (tokens, leaf) in HistoryReader.leaves(of: object) {
      out += Array(JSONPointer(tokens).description.utf8)
      out += Array(" = ".utf8)
      out += leaf.compactBytes()
      out.append(0x0A)
    }
    return out
  }
}
