import Folio

struct DiffCommand: Command {
  static let name = "diff"
  static let abstract = "Show what changed between commits or in the working tree, by document and JSON path."
  static let usage = "folio diff [REV [REV]] [TABLE…] [--format text|ndjson] [--stat]"
  static let details = """
    ARGUMENTS:
      REV      A commit: an id, branch, tag, HEAD~N, or a date (2026-11-30, '2 days ago').
               Two compare the first with the second; one compares it with the working
               tree; none compare HEAD with the working tree. The working tree includes
               edits not yet committed or recorded.
      TABLE    Only these tables (default: all).

    OPTIONS:
      --format F   text (default; coloured on a terminal) or ndjson, one change a line:
                   {"table":"todos","pk":"a","change":"changed","path":"/title","old":"x","new":"y"}
                   change is added, removed or changed; path is a JSON pointer, empty for a
                   whole document added or removed. A counter's line has "delta"; a set's
                   has the members "added" and "removed".
      --stat       Only the counts per table: documents added, removed and changed, and
                   the paths changed.

    Only the documents git's tree diff names are read. Exits 1 when a working-tree
    document could not be read (it is named on stderr and left out).
    """

  var positionals: [String]
  var format: String
  var stat: Bool

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(arguments, options: ["--format"], flags: ["--stat"])
    positionals = parsed.positionals
    format = try parsed.format(["text", "ndjson"])
    stat = parsed.flag("--stat")
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    // Revisions first, then tables: a word that names a table is a table.
    var revisions: [String] = []
    var tables: [String] = []
    for word in positionals {
      if tables.isEmpty && revisions.count < 2 && store.config.table(named: word) == nil {
        revisions.append(word)
      } else {
        _ = try store.table(named: word)
        tables.append(word)
      }
    }
    let diff = try store.diff(
      from: revisions.first, to: revisions.count > 1 ? revisions[1] : nil, tables: tables)
    let output = OutputBuffer()
    let colour = format == "text" && Output.stdoutTakesColour
    if stat {
      for row in diff.stats {
        if format == "ndjson" {
          let line: JSONValue = .object(
            JSONObject([
              ("table", .string(row.table)), ("added", .number("\(row.added)")),
              ("removed", .number("\(row.removed)")), ("changed", .number("\(row.changed)")),
              ("paths", .number("\(row.paths)")),
            ]))
          output.append(line.compactBytes() + [0x0A])
        } else {
          output.append(
            Array(
              "\(row.table): \(row.added) added, \(row.removed) removed, \(row.changed) changed (\(row.paths) paths)\n"
                .utf8))
        }
      }
    } else {
      for change in diff.changes {
        if format == "ndjson" {
          output.append(change.json.compactBytes() + [0x0A])
        } else {
          output.append(Array((Self.text(change, colour: colour) + "\n").utf8))
        }
      }
    }
    output.flush()
    for problem in diff.problems {
      Output.error("warning: left out: \(problem.commandLineText)")
    }
    return diff.problems.isEmpty ? 0 : 1
  }

  /// One change as a line: `todos a /title: -"x" +"y"`, the old value red
  /// and the new green when `colour` is set.
  static func text(_ change: DocumentChange, colour: Bool) -> String {
    let red = colour ? "\u{1B}[31m" : ""
    let green = colour ? "\u{1B}[32m" : ""
    let plain = colour ? "\u{1B}[0m" : ""
    var line = change.table + " " + change.pk
    if change.path.isEmpty {
      line += ": " + change.change.rawValue
    } else {
      line += " " + change.path + ":"
    }
    if let old = change.old { line += " " + red + "-" + old.compactString + plain }
    if let new = change.new { line += " " + green + "+" + new.compactString + plain }
    if let delta = change.delta {
      line += " (" + (delta.description.hasPrefix("-") ? "" : "+") + delta.description + ")"
    }
    if let added = change.membersAdded, !added.isEmpty {
      line += " " + green + "members +" + JSONValue.array(added).compactString + plain
    }
    if let removed = change.membersRemoved, !removed.isEmpty {
      line += " " + red + "members -" + JSONValue.array(removed).compactString + plain
    }
    return line
  }
}
