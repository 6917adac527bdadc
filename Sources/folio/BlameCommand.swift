import Folio

struct BlameCommand: Command {
  static let name = "blame"
  static let abstract =
    "Show, for each field of a document, the operation that set it and the commit that brought it."
  static let usage = "folio blame TABLE PK [PATH] [--format text|ndjson]"
  static let details = """
    ARGUMENTS:
      TABLE    The table.
      PK       The document's pk.
      PATH     Only this field and what is inside it: a JSON pointer (/address/city) or
               a field path (address.city).

    OPTIONS:
      --format F   text (default) or ndjson, one leaf a line:
                   {"table":"todos","pk":"a","path":"/views","value":5,"op":"increment",
                    "hlc":"…","replica":"r1","by":2,"commit":"…","author":"…","date":"…",…}
                   A counter's line adds "assignment" and "increments" (oldest first), a
                   set's "members", each with its own op and commit.

    Blame follows the op logs of every replica, not the text of commits, so a value
    a merge produced is blamed on the op and replica that wrote it. op is insert,
    update, upsert, increment, arrayUnion, arrayRemove, import, or edit: a value no op
    explains (edited and committed without Folio, or compacted away), blamed on the
    commit that made it. commit is null for ops not committed yet.
    """

  var address: DocumentAddress
  var path: [String]?
  var format: String

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments, options: ["--format"])
    try parsed.expectPositionals(2...3)
    address = try DocumentAddress(arguments: Array(parsed.positionals.prefix(2)))
    if parsed.positionals.count == 3 {
      let text = parsed.positionals[2]
      if text.hasPrefix("/") {
        guard let pointer = JSONPointer(pointer: text) else {
          throw UsageError("'\(text)' is not a JSON pointer: write ~0 for ~ and ~1 for / inside a key")
        }
        path = pointer.tokens
      } else {
        path = FieldPath(text).segments
      }
    }
    format = try parsed.format(["text", "ndjson"])
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    let blame = try store.blame(table: address.table, pk: address.pk)
    guard !blame.fields.isEmpty else { throw address.notFound }
    let fields = blame.fields.filter { field in
      guard let path else { return true }
      let prefix = JSONPointer(path).description
      return field.path == prefix || field.path.hasPrefix(prefix + "/")
    }
    let output = OutputBuffer()
    // A counter can list thousands of increments from a few commits.
    var commitTexts: [String: String] = [:]
    func text(_ source: BlameSource) -> String {
      let commit = source.commit.map { commit in
        if let known = commitTexts[commit.id] { return known }
        let made = [String(commit.id.prefix(8)), commit.isoDate, commit.author].joined(separator: "  ")
        commitTexts[commit.id] = made
        return made
      }
      return Self.text(source, commit: commit)
    }
    if format == "ndjson" {
      for field in fields {
        output.append(field.json(table: blame.table, pk: blame.pk).compactBytes() + [0x0A])
      }
    } else {
      let pathWidth = fields.map(\.path.count).max() ?? 0
      let values = fields.map { Self.shortened($0.value.compactString) }
      let valueWidth = values.map(\.count).max() ?? 0
      for (field, value) in zip(fields, values) {
        let line = Self.padded(field.path, pathWidth) + "  " + Self.padded(value, valueWidth) + "  "
        output.append(Array((line + text(field.source) + "\n").utf8))
        var details: [(String, BlameSource)] = []
        if let assignment = field.assignment { details.append(("assigned", assignment)) }
        for increment in field.increments ?? [] {
          let by = increment.by?.description ?? "?"
          details.append(((by.hasPrefix("-") ? "" : "+") + by, increment))
        }
        for member in field.members ?? [] {
          details.append((Self.shortened(member.value.compactString), member.source))
        }
        let width = details.map(\.0.count).max() ?? 0
        for (label, source) in details {
          output.append(Array(("    " + Self.padded(label, width) + "  " + text(source) + "\n").utf8))
        }
      }
    }
    output.flush()
    return 0
  }

  /// `increment    1764…-0000-r1  3f9c2a1b  2026-12-03T20:48:59Z  Alice`,
  /// given the commit's part.
  static func text(_ source: BlameSource, commit: String?) -> String {
    padded(source.kind.rawValue, 11) + "  " + (source.stamp?.description ?? "-") + "  "
      + (commit ?? "(not committed yet)")
  }

  private static func shortened(_ text: String) -> String {
    text.count <= 40 ? text : text.prefix(39) + "…"
  }

  private static func padded(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
  }
}
