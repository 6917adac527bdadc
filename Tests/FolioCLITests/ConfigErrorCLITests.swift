import FolioTestSupport
import Foundation
import Testing

/// Mistakes a person makes editing `folio.yaml` by hand, each reported at
/// the line and column of the mistake itself, not where the parser gave up
/// or at the table that holds it.
@Suite struct ConfigErrorCLITests {
  struct Mistake: Sendable, CustomTestStringConvertible {
    var name: String
    var yaml: String
    /// The first line of stderr: `folio.yaml:LINE:COL: error: …`.
    var error: String
    var testDescription: String { name }
  }

  static let mistakes: [Mistake] = [
    Mistake(
      name: "a bad value nested under a table",
      yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\n    columns:\n      views: countr\n",
      error:
        "folio.yaml:6:14: error: unknown column kind 'countr' for 'views'; expected counter, set or register"),
    Mistake(
      name: "an unknown key in a table",
      yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\n    indexs: [owner]\n",
      error:
        "folio.yaml:5:5: error: unknown key 'indexs' in table 'todos'; expected one of: path, key, order, indexes, columns, schema, fields, renamed-from, layout"
    ),
    Mistake(
      name: "a wrong type in a list",
      yaml: "version: 1\ntables:\n  todos:\n    order:\n      - due\n      - {a: 1}\n",
      error:
        "folio.yaml:6:9: error: 'order' of table 'todos' must be a list of strings; found a mapping in it"),
    Mistake(
      name: "a key indented less than its siblings",
      yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\n   order: [due]\n",
      error:
        "folio.yaml:5:4: error: invalid YAML: line 5 is indented to column 4, which lines up with no key above it; indent it as the keys beside it"
    ),
    Mistake(
      name: "a key dedented below its section",
      yaml: "version: 1\nsync:\n  pull-every: 5m\n remote: origin\ntables: {}\n",
      error:
        "folio.yaml:4:2: error: invalid YAML: line 4 is indented to column 2, which lines up with no key above it; indent it as the keys beside it"
    ),
    Mistake(
      name: "a list item among a mapping's keys",
      yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\n  - notes\n",
      error:
        "folio.yaml:5:3: error: invalid YAML: a list item ('- notes') among the keys of a mapping; write it as 'key: value', or indent it under a key"
    ),
    Mistake(
      name: "a key and its value without the ':'",
      yaml: "version: 1\ntables:\n  todos:\n    path data/todos\n    order: [due]\n",
      error:
        "folio.yaml:4:9: error: expected ':' after 'path' (write 'path: data/todos'); without it, line 5 reads as more of the same text"
    ),
    Mistake(
      name: "a stray closing bracket",
      yaml: "version: 1\ntables:\n  todos:\n    order: [due]]\n",
      error:
        "folio.yaml:4:17: error: invalid YAML: did not find expected key (while parsing a block mapping at line 4, column 5)"
    ),
    Mistake(
      name: "a key indented deeper than its siblings",
      yaml: "version: 1\ntables:\n  todos:\n    path: data/todos\n      order: [due]\n",
      error:
        "folio.yaml:5:7: error: line 5 is indented deeper than line 4, so it reads as more of the value 'data/todos' (all of it: 'data/todos order'); indent it as the lines beside it, or, for one long value, quote it"
    ),
    Mistake(
      // Valid YAML (one value, 'due - owner'), so without the check the
      // table would be ordered by a field nobody has.
      name: "a list item indented deeper than the one above",
      yaml: "version: 1\ntables:\n  todos:\n    order:\n    - due\n     - owner\n",
      error:
        "folio.yaml:6:6: error: line 6 is indented deeper than line 5, so it reads as more of the value 'due' (all of it: 'due - owner'); indent it as the lines beside it, or, for one long value, quote it"
    ),
    Mistake(
      name: "a table name without its colon",
      yaml: "version: 1\ntables:\n  todos\n    path: x\n",
      error:
        "folio.yaml:3:8: error: expected ':' after 'todos'; without it, line 4 reads as more of the same text"
    ),
    Mistake(
      name: "a bad duration",
      yaml: "version: 1\ntables: {}\nsync:\n  pull-every: 5 minutes\n",
      error:
        "folio.yaml:4:15: error: 'pull-every' in 'sync': invalid duration '5 minutes': '5' has no unit; write a number and a unit, such as 500ms, 5s, 2m or 1h"
    ),
    Mistake(
      name: "a duplicate table",
      yaml: "version: 1\ntables:\n  todos:\n    path: a\n  todos:\n    path: b\n",
      error: "folio.yaml:5:3: error: duplicate key 'todos' (first defined at line 3, column 3)"),
    Mistake(
      name: "a duplicate key inside a table",
      yaml: "version: 1\ntables:\n  todos:\n    order: [a]\n    order: [b]\n",
      error: "folio.yaml:5:5: error: duplicate key 'order' (first defined at line 4, column 5)"),
    Mistake(
      name: "an unclosed list",
      yaml: "version: 1\ntables:\n  todos:\n    order: [due, owner\n    path: x\n",
      error:
        "folio.yaml:4:12: error: invalid YAML: this '[' is never closed: did not find expected ',' or ']' at line 5, column 9"
    ),
    Mistake(
      name: "an unclosed mapping",
      yaml: "version: 1\ntables: {todos: {path: x}\nsync:\n  remote: origin\n",
      error:
        "folio.yaml:2:9: error: invalid YAML: this '{' is never closed: did not find expected ',' or '}' at line 3, column 1"
    ),
    Mistake(
      name: "a comma missing in a list",
      yaml: "version: 1\ntables:\n  todos:\n    order: [due\n      owner]\n",
      error:
        "folio.yaml:5:7: error: 'due owner' runs on from line 4 to line 5 as one value; if these are two values, put a ',' between them"
    ),
    Mistake(
      name: "an unclosed quote",
      yaml: "version: 1\ntables:\n  todos:\n    path: \"data/todos\n    order: [due]\n",
      error:
        "folio.yaml:4:11: error: invalid YAML: this quoted value is never closed: found unexpected end of stream at line 6, column 1"
    ),
    Mistake(
      name: "a tab for indentation",
      yaml: "version: 1\ntables:\n\ttodos:\n",
      error: "folio.yaml:3:1: error: invalid YAML: a tab; YAML indents with spaces only"),
    Mistake(
      name: "a bad value in a flow mapping after a non-ASCII name",
      yaml: "version: 1\ntables:\n  todos: {path: data/todos, columns: {vïews: countr}}\n",
      error:
        "folio.yaml:3:46: error: unknown column kind 'countr' for 'vïews'; expected counter, set or register"),
    Mistake(
      name: "an empty duration",
      yaml: "version: 1\nsync:\n  pull-every:\n  remote: origin\ntables:\n",
      error:
        "folio.yaml:3:14: error: 'pull-every' in 'sync' must be a duration such as 30s or 5m, or off; found null"
    ),
  ]

  /// A scratch folder that is a git repository holding `yaml` as its
  /// `folio.yaml`, as a store whose config was just edited is.
  func store(_ yaml: String) throws -> CLIScratch {
    let scratch = try CLIScratch(yaml: yaml)
    #expect(try FolioRunner.shell("git init -q .", in: scratch.path) == 0)
    return scratch
  }

  @Test(arguments: mistakes)
  func pointsAtTheMistake(_ mistake: Mistake) throws {
    let scratch = try store(mistake.yaml)
    defer { scratch.remove() }
    for arguments in [["tables"], ["query", "todos"]] {
      let result = try FolioRunner.run(arguments, in: scratch.path)
      #expect(result.status == 1, "\(arguments)")
      #expect(result.stdout.isEmpty, "\(arguments)")
      let first = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
      #expect(first == mistake.error, "\(arguments): \(result.stderr)")
    }
  }

  /// The excerpt under the message shows the line of the mistake, with a
  /// caret under its column.
  @Test func theExcerptShowsTheMistakenLine() throws {
    let scratch = try store("version: 1\ntables:\n  todos\n    path: x\n")
    defer { scratch.remove() }
    let result = try scratch.folio("tables")
    #expect(result.status == 1)
    #expect(
      result.stderr
        == "folio.yaml:3:8: error: expected ':' after 'todos'; without it, line 4 reads as more of the same text\n  todos\n       ^\n"
    )
  }
}
