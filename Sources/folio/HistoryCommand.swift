import Folio

struct HistoryCommand: Command {
  static let name = "history"
  static let abstract = "List the versions of a document, newest first, through merges."
  static let usage = "folio history TABLE PK [--diff] [--format text|ndjson]"
  static let details = """
    ARGUMENTS:
      TABLE    The table.
      PK       The document's pk.

    OPTIONS:
      --diff       Each version's changes from its first parent's, by JSON path (as
                   'folio diff' shows them), in place of its value.
      --format F   text (default) or ndjson, one version a line:
                   {"commit":"…","date":"…","author":"…","email":"…","summary":"…","value":{…}}
                   value is null where the commit removed the document; with --diff,
                   "changes" holds the changes in place of "value".

    A version is a commit whose document differs from every parent's: a replay merge
    that made a value neither side had is one; a merge that took one side's is not.
    Edits not yet committed are not listed.
    """

  var address: DocumentAddress
  var diff: Bool
  var format: String

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments, options: ["--format"], flags: ["--diff"])
    address = try DocumentAddress(parsed)
    diff = parsed.flag("--diff")
    format = try parsed.format(["text", "ndjson"])
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    let versions = try store.history(table: address.table, pk: address.pk)
    guard !versions.isEmpty else {
      throw FolioError(
        .notFound, "no commit holds document '\(address.pk)' in table '\(address.table)'",
        table: address.table, pk: address.pk)
    }
    let output = OutputBuffer()
    let colour = format == "text" && Output.stdoutTakesColour
    for version in versions {
      if format == "ndjson" {
        output.append(version.json(diff: diff).compactBytes() + [0x0A])
        continue
      }
      let commit = version.commit
      var text = "commit \(commit.id.prefix(12))  \(commit.isoDate)  \(commit.author) <\(commit.email)>  "
      text += commit.summary + "\n"
      if diff {
        for change in version.changes { text += "    " + DiffCommand.text(change, colour: colour) + "\n" }
      } else {
        text += "    " + (version.document.map { $0.json.compactString } ?? "(removed)") + "\n"
      }
      output.append(Array(text.utf8))
    }
    output.flush()
    return 0
  }
}
