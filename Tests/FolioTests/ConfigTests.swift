import Folio
import FolioCore
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

/// Runs `body` with a fresh directory under the system temp folder, and
/// removes it afterwards whatever happens.
private func withScratchDirectory<T>(_ body: (URL) throws -> T) throws -> T {
  let url = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
    .appendingPathComponent("folio-config-tests-\(UUID().uuidString)", isDirectory: true)
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: url) }
  return try body(url)
}

struct ConfigParsingTests {
  /// A config text and what it must parse to.
  struct ValidCase: Sendable, CustomTestStringConvertible {
    var name: String
    var yaml: String
    var expected: Config
    var testDescription: String { name }
  }

  /// A config text, where its error must point, and a piece of the message.
  struct InvalidCase: Sendable, CustomTestStringConvertible {
    var name: String
    var yaml: String
    /// The expected `file:line:col` prefix.
    var location: String
    var fragment: String
    var testDescription: String { name }
  }

  static let validCases: [ValidCase] = [
    ValidCase(
      name: "the documented example",
      yaml: """
        version: 1
        tables:
          todos:
            path: data/todos        # folder, relative to the store root
            key: id                 # column that holds the pk
            order: [lastUpdate]     # order keys
            columns:                # optional column kinds
              views: counter
              tags: set
              title: register
        """,
      expected: Config(tables: [
        TableConfig(
          name: "todos", path: "data/todos", order: ["lastUpdate"],
          columns: ["views": .counter, "tags": .set, "title": .register])
      ])),
    ValidCase(name: "version only", yaml: "version: 1\n", expected: Config()),
    ValidCase(name: "empty tables", yaml: "version: 1\ntables: {}\n", expected: Config()),
    ValidCase(name: "null tables", yaml: "version: 1\ntables: ~\n", expected: Config()),
    ValidCase(
      name: "a table with nothing under it takes every default",
      yaml: "version: 1\ntables:\n  todos:\n",
      expected: Config(tables: [
        TableConfig(name: "todos", path: "todos", key: "id", order: [], columns: [:])
      ])),
    ValidCase(
      name: "null settings are absent",
      yaml: """
        version: 1
        tables:
          todos:
            path: ~
            order: ~
            columns:
              views: ~
        """,
      expected: Config(tables: [TableConfig(name: "todos")])),
    ValidCase(
      name: "key null keeps the pk in the file name only",
      yaml: "version: 1\ntables:\n  a: {key: null}\n  b: {key: ~, columns: {id: counter}}\n  c:\n    key:\n",
      expected: Config(tables: [
        TableConfig(name: "a", key: nil), TableConfig(name: "b", key: nil, columns: ["id": .counter]),
        TableConfig(name: "c", key: nil),
      ])),
    ValidCase(
      name: "paths are normalised",
      yaml: "version: 1\ntables:\n  todos: {path: ./data//./todos/}\n",
      expected: Config(tables: [TableConfig(name: "todos", path: "data/todos")])),
    ValidCase(
      name: "tables keep file order and custom keys",
      yaml: """
        version: 1
        tables:
          zebra: {key: slug, columns: {id: counter}}
          apple:
            order:
              - meta.updatedAt
              - title
        """,
      expected: Config(tables: [
        TableConfig(name: "zebra", key: "slug", columns: ["id": .counter]),
        TableConfig(name: "apple", order: ["meta.updatedAt", "title"]),
      ])),
    ValidCase(
      name: "version after tables",
      yaml: "tables: {a: {}}\nversion: 1\n",
      expected: Config(tables: [TableConfig(name: "a")])),
    ValidCase(
      name: "names made of digits, dots, dashes and underscores",
      yaml: "version: 1\ntables:\n  2024: {}\n  logs.v2_x-y: {}\n",
      expected: Config(tables: [TableConfig(name: "2024"), TableConfig(name: "logs.v2_x-y")])),
    ValidCase(
      name: "quoted strings and quoted kinds",
      yaml: """
        version: 1
        tables:
          'todos':
            path: "data/my todos"
            key: 'pk'
            order: ["a.b", 'c']
            columns: {"views": "counter", tags: 'set'}
        """,
      expected: Config(tables: [
        TableConfig(
          name: "todos", path: "data/my todos", key: "pk", order: ["a.b", "c"],
          columns: ["views": .counter, "tags": .set])
      ])),
    ValidCase(
      name: "sibling folders with a common prefix do not overlap",
      yaml:
        "version: 1\ntables:\n  a: {path: data/todo}\n  b: {path: data/todos}\n  c: {path: datax}\n",
      expected: Config(tables: [
        TableConfig(name: "a", path: "data/todo"),
        TableConfig(name: "b", path: "data/todos"),
        TableConfig(name: "c", path: "datax"),
      ])),
    ValidCase(
      name: ".folio below the first segment and non-ASCII folders are allowed",
      yaml: "version: 1\ntables:\n  a: {path: data/.folio}\n  b: {path: données/été}\n",
      expected: Config(tables: [
        TableConfig(name: "a", path: "data/.folio"),
        TableConfig(name: "b", path: "données/été"),
      ])),
    ValidCase(
      name: "directive, document markers, comments, CRLF and a byte-order mark",
      yaml:
        "\u{FEFF}%YAML 1.1\r\n---\r\n# the store\r\nversion: 1 # always 1\r\ntables:\r\n  a: {}\r\n...\r\n",
      expected: Config(tables: [TableConfig(name: "a")])),
    ValidCase(
      name: "explicit core tags",
      yaml: "version: !!int 1\ntables: !!map\n  a: {key: !!str 7, order: !!seq [x]}\n",
      expected: Config(tables: [TableConfig(name: "a", key: "7", order: ["x"])])),
    ValidCase(
      name: "secondary indexes",
      yaml: "version: 1\ntables:\n  flights:\n    order: [dep_delay]\n    indexes: [carrier, o.d]\n",
      expected: Config(tables: [
        TableConfig(name: "flights", order: ["dep_delay"], indexes: ["carrier", "o.d"])
      ])),
  ]

  @Test(arguments: validCases)
  func parsesValidConfig(_ testCase: ValidCase) throws {
    let config = try Config(yaml: testCase.yaml)
    // No case names a layout: every table is flat, whatever a TableConfig defaults to.
    var expected = testCase.expected
    for index in expected.tables.indices { expected.tables[index].layout = .flat }
    #expect(config == expected)
  }

  static let invalidCases: [InvalidCase] = [
    // YAML syntax, with libyaml's words.
    InvalidCase(
      name: "unclosed flow mapping", yaml: "version: 1\ntables:\n  todos: {path: a\n",
      location: "folio.yaml:3:10",
      fragment: "this '{' is never closed: did not find expected ',' or '}' at line 4, column 1"),
    InvalidCase(
      name: "tab indentation", yaml: "version: 1\ntables:\n\ttodos: {}\n",
      location: "folio.yaml:3:1", fragment: "a tab; YAML indents with spaces only"),
    InvalidCase(
      name: "bad indentation", yaml: "version: 1\ntables:\n  todos:\n    path: a\n   key: b\n",
      location: "folio.yaml:5:4",
      fragment: "line 5 is indented to column 4, which lines up with no key above it"),
    InvalidCase(
      name: "mapping value in a scalar", yaml: "version: 1\n  tables: x\n",
      location: "folio.yaml:2:3", fragment: "line 2 is indented deeper than line 1"),
    InvalidCase(
      name: "control character", yaml: "version: 1\ntables:\n  a: {path: x\u{1}y}\n",
      location: "folio.yaml:3:14", fragment: "control characters are not allowed (U+0001)"),

    // Shape of the file.
    InvalidCase(
      name: "empty file", yaml: "", location: "folio.yaml:1:1", fragment: "missing 'version'"),
    InvalidCase(
      name: "only comments", yaml: "# nothing yet\n", location: "folio.yaml:1:1",
      fragment: "missing 'version'"),
    InvalidCase(
      name: "empty document", yaml: "---\n", location: "folio.yaml:1:1",
      fragment: "missing 'version'"),
    InvalidCase(
      name: "top level is a list", yaml: "- version: 1\n", location: "folio.yaml:1:1",
      fragment: "the top level of folio.yaml must be a mapping"),
    InvalidCase(
      name: "top level is a scalar", yaml: "hello\n", location: "folio.yaml:1:1",
      fragment: "found a plain scalar"),
    InvalidCase(
      name: "two documents", yaml: "version: 1\n---\nversion: 1\n", location: "folio.yaml:2:1",
      fragment: "must hold a single YAML document"),
    InvalidCase(
      name: "unknown top-level key", yaml: "version: 1\ntabels: {}\n", location: "folio.yaml:2:1",
      fragment: "unknown key 'tabels'; expected one of: version, tables"),

    // Version.
    InvalidCase(
      name: "version missing", yaml: "tables: {}\n", location: "folio.yaml:1:1",
      fragment: "missing 'version'"),
    InvalidCase(
      name: "version null", yaml: "version: ~\n", location: "folio.yaml:1:10",
      fragment: "missing 'version'"),
    InvalidCase(
      name: "version quoted", yaml: "version: \"1\"\n", location: "folio.yaml:1:10",
      fragment: "'version' must be the integer 1, not the string \"1\""),
    InvalidCase(
      name: "version tagged as a string", yaml: "version: !!str 1\n", location: "folio.yaml:1:10",
      fragment: "not the string"),
    InvalidCase(
      name: "version 2", yaml: "version: 2\ntables: {a: {future: x}}\n",
      location: "folio.yaml:1:10", fragment: "unsupported version 2"),
    InvalidCase(
      name: "version a float", yaml: "version: 1.0\n", location: "folio.yaml:1:10",
      fragment: "'version' must be the integer 1; found '1.0'"),
    InvalidCase(
      name: "version a list", yaml: "version: [1]\n", location: "folio.yaml:1:10",
      fragment: "found a list"),
    InvalidCase(
      name: "!!int that is not an integer", yaml: "version: !!int one\n",
      location: "folio.yaml:1:10", fragment: "is not a decimal integer"),

    // Types.
    InvalidCase(
      name: "tables a list", yaml: "version: 1\ntables: [a, b]\n", location: "folio.yaml:2:9",
      fragment: "'tables' must be a mapping"),
    InvalidCase(
      name: "table body a scalar", yaml: "version: 1\ntables:\n  todos: yes\n",
      location: "folio.yaml:3:10", fragment: "table 'todos' must be a mapping"),
    InvalidCase(
      name: "path a list", yaml: "version: 1\ntables:\n  todos: {path: [a]}\n",
      location: "folio.yaml:3:17", fragment: "'path' of table 'todos' must be a string"),
    InvalidCase(
      name: "key a mapping", yaml: "version: 1\ntables:\n  todos: {key: {a: b}}\n",
      location: "folio.yaml:3:16", fragment: "'key' of table 'todos' must be a string"),
    InvalidCase(
      name: "order a scalar", yaml: "version: 1\ntables:\n  todos:\n    order: lastUpdate\n",
      location: "folio.yaml:4:12", fragment: "'order' of table 'todos' must be a list of strings"),
    InvalidCase(
      name: "order holding a list", yaml: "version: 1\ntables:\n  todos: {order: [a, [b]]}\n",
      location: "folio.yaml:3:22", fragment: "must be a list of strings; found a list in it"),
    InvalidCase(
      name: "columns a list", yaml: "version: 1\ntables:\n  todos: {columns: [views]}\n",
      location: "folio.yaml:3:20", fragment: "'columns' of table 'todos' must be a mapping"),
    InvalidCase(
      name: "column kind a list",
      yaml: "version: 1\ntables:\n  todos: {columns: {views: [counter]}}\n",
      location: "folio.yaml:3:28", fragment: "column kind for 'views' must be a string"),
    InvalidCase(
      name: "mapping key a list", yaml: "version: 1\n? [a]\n: b\n", location: "folio.yaml:2:3",
      fragment: "mapping keys must be strings"),
    InvalidCase(
      name: "unsupported tag", yaml: "version: 1\ntables: {a: !foo x}\n",
      location: "folio.yaml:2:13", fragment: "unsupported tag '!foo'"),
    InvalidCase(
      name: "unsupported collection tag", yaml: "version: 1\ntables: !!set {a: ~}\n",
      location: "folio.yaml:2:9", fragment: "unsupported tag 'tag:yaml.org,2002:set'"),

    // Tables.
    InvalidCase(
      name: "unknown table key", yaml: "version: 1\ntables:\n  todos:\n    pth: data\n",
      location: "folio.yaml:4:5",
      fragment: "unknown key 'pth' in table 'todos'; expected one of: path, key, order, indexes, columns"),
    InvalidCase(
      name: "table name with a space", yaml: "version: 1\ntables:\n  my todos: {}\n",
      location: "folio.yaml:3:3", fragment: "invalid table name 'my todos'"),
    InvalidCase(
      name: "table name starting with a dot", yaml: "version: 1\ntables:\n  .hidden: {}\n",
      location: "folio.yaml:3:3", fragment: "do not start with '.' or '-'"),
    InvalidCase(
      name: "table name starting with a dash", yaml: "version: 1\ntables: {-x: {}}\n",
      location: "folio.yaml:2:10", fragment: "invalid table name '-x'"),
    InvalidCase(
      name: "table name with a slash", yaml: "version: 1\ntables: {a/b: {}}\n",
      location: "folio.yaml:2:10", fragment: "invalid table name 'a/b'"),
    InvalidCase(
      name: "table name non-ASCII", yaml: "version: 1\ntables: {é: {}}\n",
      location: "folio.yaml:2:10", fragment: "invalid table name 'é'"),
    InvalidCase(
      name: "empty table name", yaml: "version: 1\ntables:\n  \"\": {}\n",
      location: "folio.yaml:3:3", fragment: "table name must not be empty"),
    InvalidCase(
      name: "empty key", yaml: "version: 1\ntables:\n  todos: {key: \"\"}\n",
      location: "folio.yaml:3:16", fragment: "'key' of table 'todos' must not be empty"),
    InvalidCase(
      name: "empty order entry", yaml: "version: 1\ntables:\n  todos: {order: [a, \"\"]}\n",
      location: "folio.yaml:3:22", fragment: "order key of table 'todos' must not be empty"),
    InvalidCase(
      name: "null order entry",
      yaml: "version: 1\ntables:\n  todos:\n    order:\n      - a\n      -\n",
      location: "folio.yaml:6:8", fragment: "order key of table 'todos' must not be empty"),
    InvalidCase(
      name: "order entry with an empty segment",
      yaml: "version: 1\ntables:\n  todos: {order: [a..b]}\n", location: "folio.yaml:3:19",
      fragment: "order key 'a..b' of table 'todos' has an empty segment"),
    InvalidCase(
      name: "order entry listed twice", yaml: "version: 1\ntables:\n  todos: {order: [a, a]}\n",
      location: "folio.yaml:3:22", fragment: "order key 'a' of table 'todos' is listed twice"),
    InvalidCase(
      name: "indexes a scalar", yaml: "version: 1\ntables:\n  todos:\n    indexes: carrier\n",
      location: "folio.yaml:4:14", fragment: "'indexes' of table 'todos' must be a list of strings"),
    InvalidCase(
      name: "indexes holding a mapping", yaml: "version: 1\ntables:\n  todos: {indexes: [a, {b: c}]}\n",
      location: "folio.yaml:3:24",
      fragment: "'indexes' of table 'todos' must be a list of strings; found a mapping in it"),
    InvalidCase(
      name: "empty index entry", yaml: "version: 1\ntables:\n  todos: {indexes: [a, \"\"]}\n",
      location: "folio.yaml:3:24", fragment: "index path of table 'todos' must not be empty"),
    InvalidCase(
      name: "index entry with an empty segment",
      yaml: "version: 1\ntables:\n  todos: {indexes: [a., b]}\n", location: "folio.yaml:3:21",
      fragment: "index path 'a.' of table 'todos' has an empty segment"),
    InvalidCase(
      name: "index entry listed twice", yaml: "version: 1\ntables:\n  todos: {indexes: [b, b]}\n",
      location: "folio.yaml:3:24", fragment: "index path 'b' of table 'todos' is listed twice"),
    InvalidCase(
      name: "index entry that is an order key",
      yaml: "version: 1\ntables:\n  todos:\n    indexes: [b, a]\n    order: [a]\n",
      location: "folio.yaml:4:18",
      fragment: "index path 'a' of table 'todos' is an order key, which is indexed already"),
    InvalidCase(
      name: "unknown column kind",
      yaml: "version: 1\ntables:\n  todos:\n    columns:\n      views: countr\n",
      location: "folio.yaml:5:14",
      fragment: "unknown column kind 'countr' for 'views'; expected counter, set or register"),
    InvalidCase(
      name: "empty column name", yaml: "version: 1\ntables:\n  todos: {columns: {'': set}}\n",
      location: "folio.yaml:3:21", fragment: "column name in table 'todos' must not be empty"),
    InvalidCase(
      name: "kind for the default key column",
      yaml:
        "version: 1\ntables:\n  todos:\n    columns:\n      views: counter\n      id: counter\n",
      location: "folio.yaml:6:7",
      fragment: "column 'id' is the key of table 'todos' and always a register"),
    InvalidCase(
      name: "kind for a custom key column, key listed after columns",
      yaml: "version: 1\ntables:\n  todos:\n    columns: {slug: set}\n    key: slug\n",
      location: "folio.yaml:4:15", fragment: "column 'slug' is the key of table 'todos'"),
    InvalidCase(
      name: "even register is refused for the key column",
      yaml: "version: 1\ntables:\n  todos: {columns: {id: register}}\n",
      location: "folio.yaml:3:21", fragment: "column 'id' is the key"),

    // Duplicate keys.
    InvalidCase(
      name: "duplicate top-level key", yaml: "version: 1\ntables: {}\nversion: 1\n",
      location: "folio.yaml:3:1",
      fragment: "duplicate key 'version' (first defined at line 1, column 1)"),
    InvalidCase(
      name: "duplicate table", yaml: "version: 1\ntables:\n  a: {}\n  a: {path: b}\n",
      location: "folio.yaml:4:3", fragment: "duplicate key 'a' (first defined at line 3, column 3)"),
    InvalidCase(
      name: "duplicate table setting", yaml: "version: 1\ntables:\n  a: {path: x, path: y}\n",
      location: "folio.yaml:3:16", fragment: "duplicate key 'path'"),
    InvalidCase(
      name: "duplicate column", yaml: "version: 1\ntables:\n  a: {columns: {v: set, v: counter}}\n",
      location: "folio.yaml:3:25", fragment: "duplicate key 'v'"),
    InvalidCase(
      name: "plain and quoted spellings of one key",
      yaml: "version: 1\ntables:\n  2024: {}\n  \"2024\": {}\n", location: "folio.yaml:4:3",
      fragment: "duplicate key '2024'"),

    // Paths.
    InvalidCase(
      name: "absolute path", yaml: "version: 1\ntables:\n  todos: {path: /data/todos}\n",
      location: "folio.yaml:3:17", fragment: "must be relative to the store root, not absolute"),
    InvalidCase(
      name: "path leaving the store", yaml: "version: 1\ntables:\n  todos: {path: ../outside}\n",
      location: "folio.yaml:3:17", fragment: "path '../outside' of table 'todos' leaves the store"),
    InvalidCase(
      name: "path leaving the store further in",
      yaml: "version: 1\ntables:\n  todos: {path: a/../../b}\n", location: "folio.yaml:3:17",
      fragment: "leaves the store"),
    InvalidCase(
      name: "path with a '..' segment", yaml: "version: 1\ntables:\n  todos: {path: a/../b}\n",
      location: "folio.yaml:3:17", fragment: "must not contain '..' segments"),
    InvalidCase(
      name: "empty path", yaml: "version: 1\ntables:\n  todos: {path: ''}\n",
      location: "folio.yaml:3:17", fragment: "path of table 'todos' must not be empty"),
    InvalidCase(
      name: "path naming the store root", yaml: "version: 1\ntables:\n  todos: {path: ./}\n",
      location: "folio.yaml:3:17", fragment: "names the store root"),
    InvalidCase(
      name: "path into .git", yaml: "version: 1\ntables:\n  todos: {path: .git/todos}\n",
      location: "folio.yaml:3:17", fragment: "points into a .git folder"),
    InvalidCase(
      name: "path into a nested .git", yaml: "version: 1\ntables:\n  todos: {path: data/.git}\n",
      location: "folio.yaml:3:17", fragment: "points into a .git folder"),
    InvalidCase(
      name: "path into .GIT", yaml: "version: 1\ntables:\n  todos: {path: data/.GIT/x}\n",
      location: "folio.yaml:3:17", fragment: "points into a .git folder"),
    InvalidCase(
      name: "path into .folio", yaml: "version: 1\ntables:\n  todos: {path: .folio/ops}\n",
      location: "folio.yaml:3:17", fragment: "points into .folio"),
    InvalidCase(
      name: "path onto the config file", yaml: "version: 1\ntables:\n  todos: {path: folio.yaml}\n",
      location: "folio.yaml:3:17", fragment: "collides with the config file"),
    InvalidCase(
      name: "path with a control character",
      yaml: "version: 1\ntables:\n  todos: {path: \"a\\tb\"}\n", location: "folio.yaml:3:17",
      fragment: "contains a control character"),
    InvalidCase(
      name: "duplicate paths", yaml: "version: 1\ntables:\n  a: {path: x}\n  b: {path: x}\n",
      location: "folio.yaml:4:13", fragment: "table 'b' has the same path 'x' as table 'a'"),
    InvalidCase(
      name: "duplicate paths after normalising",
      yaml: "version: 1\ntables:\n  a: {path: data/todos}\n  b: {path: ./data//todos/}\n",
      location: "folio.yaml:4:13", fragment: "has the same path 'data/todos'"),
    InvalidCase(
      name: "a default path clashing with an explicit one",
      yaml: "version: 1\ntables:\n  a: {path: x}\n  x: {}\n", location: "folio.yaml:4:3",
      fragment: "table 'x' has the same path 'x' as table 'a'"),
    InvalidCase(
      name: "nested paths, outer first",
      yaml: "version: 1\ntables:\n  data: {}\n  todos: {path: data/todos}\n",
      location: "folio.yaml:4:17",
      fragment: "path 'data/todos' of table 'todos' is inside 'data', the folder of table 'data'"),
    InvalidCase(
      name: "nested paths, inner first",
      yaml: "version: 1\ntables:\n  todos: {path: data/todos/open}\n  data: {path: data}\n",
      location: "folio.yaml:4:16",
      fragment:
        "path 'data' of table 'data' contains 'data/todos/open', the folder of table 'todos'"),

    // Resource limits.
    InvalidCase(
      name: "an alias", yaml: "version: 1\ntables:\n  a: &t {}\n  b: *t\n",
      location: "folio.yaml:4:6",
      fragment: "aliases (*t) are not supported"),
    InvalidCase(
      name: "deep nesting",
      yaml: "version: 1\ntables: " + String(repeating: "[", count: 200)
        + String(repeating: "]", count: 200),
      location: "folio.yaml:2:72", fragment: "nesting is deeper than 64 levels"),
    InvalidCase(
      name: "too many nodes",
      yaml: "version: 1\ntables: [" + String(repeating: "1,", count: 100_000) + "]\n",
      location: "folio.yaml:2:200000", fragment: "more than 100000 YAML nodes"),
    // The sync section.
    InvalidCase(
      name: "sync not a mapping", yaml: "version: 1\nsync: [origin]\n",
      location: "folio.yaml:2:7", fragment: "'sync' must be a mapping"),
    InvalidCase(
      name: "sync unknown key", yaml: "version: 1\nsync:\n  remte: origin\n",
      location: "folio.yaml:3:3",
      fragment: "unknown key 'remte' in 'sync'; expected one of: remote, pull-every, ssh-key"),
    InvalidCase(
      name: "sync bad duration", yaml: "version: 1\nsync:\n  pull-every: 5 minutes\n",
      location: "folio.yaml:3:15", fragment: "'pull-every' in 'sync': invalid duration '5 minutes'"),
    InvalidCase(
      name: "sync empty remote", yaml: "version: 1\nsync:\n  remote: ''\n",
      location: "folio.yaml:3:11", fragment: "'remote' in 'sync' must name a git remote"),
    // The index section.
    InvalidCase(
      name: "index not a mapping", yaml: "version: 1\nindex: auto\n",
      location: "folio.yaml:2:8", fragment: "'index' must be a mapping with daemon and idle"),
    InvalidCase(
      name: "index unknown key", yaml: "version: 1\nindex:\n  deamon: off\n",
      location: "folio.yaml:3:3", fragment: "unknown key 'deamon' in 'index'; expected one of: daemon, idle"),
    InvalidCase(
      name: "index bad daemon", yaml: "version: 1\nindex:\n  daemon: sometimes\n",
      location: "folio.yaml:3:11", fragment: "'daemon' in 'index' must be auto or off; found 'sometimes'"),
    InvalidCase(
      name: "index daemon list", yaml: "version: 1\nindex:\n  daemon: [auto]\n",
      location: "folio.yaml:3:11", fragment: "'daemon' in 'index' must be auto or off"),
    InvalidCase(
      name: "index bad idle", yaml: "version: 1\nindex:\n  idle: 30 minutes\n",
      location: "folio.yaml:3:9", fragment: "'idle' in 'index': invalid duration '30 minutes'"),
    InvalidCase(
      name: "index empty idle", yaml: "version: 1\nindex:\n  idle:\n",
      location: "folio.yaml:3:8", fragment: "'idle' in 'index' must be a duration"),
    InvalidCase(
      name: "sync ssh-key not a string", yaml: "version: 1\nsync:\n  ssh-key: [a, b]\n",
      location: "folio.yaml:3:12", fragment: "'ssh-key' in 'sync' must be the path of an ssh private key file"
    ),
    InvalidCase(
      name: "sync ssh-key empty", yaml: "version: 1\nsync:\n  remote: origin\n  ssh-key: ''\n",
      location: "folio.yaml:4:12", fragment: "'ssh-key' in 'sync' must be the path"),
    InvalidCase(
      name: "sync ssh-key null", yaml: "version: 1\nsync:\n  ssh-key:\n",
      location: "folio.yaml:3:11", fragment: "found nothing"),
    InvalidCase(
      name: "sync ssh-key other user's home", yaml: "version: 1\nsync:\n  ssh-key: ~bob/.ssh/id\n",
      location: "folio.yaml:3:12", fragment: "only '~/' is expanded (to your home folder), not '~bob'"),
    InvalidCase(
      name: "sync ssh-key misspelt", yaml: "version: 1\nsync:\n  ssh_key: id\n",
      location: "folio.yaml:3:3", fragment: "expected one of: remote, pull-every, ssh-key"),
    InvalidCase(
      name: "over 1 MiB",
      yaml: "version: 1\n" + String(repeating: "#", count: 1 << 20) + "\n",
      location: "folio.yaml:1:1", fragment: "larger than 1 MiB"),
  ]

  @Test(arguments: invalidCases)
  func rejectsInvalidConfig(_ testCase: InvalidCase) throws {
    let error = try #require(throws: FolioError.self) { try Config(yaml: testCase.yaml) }
    #expect(error.code == .invalidConfig)
    #expect(error.location != nil)
    let text = String(describing: error)
    #expect(text.hasPrefix("\(testCase.location): error: "), "\(text)")
    #expect(error.message.contains(testCase.fragment), "\(text)")
  }

  @Test func errorsUseTheGivenFileName() throws {
    let error = try #require(throws: FolioError.self) {
      try Config(yaml: "version: 1\ntables: {a: {pth: x}}\n", file: "stores/app/folio.yaml")
    }
    #expect(
      String(describing: error)
        == "stores/app/folio.yaml:2:14: error: unknown key 'pth' in table 'a'; "
        + "expected one of: path, key, order, indexes, columns, schema, fields, renamed-from, layout")
  }

  @Test func invalidUTF8IsReportedWithItsPosition() throws {
    let bytes = Array("version: 1\ntables:\n  ab".utf8) + [0xFF] + Array(": {}\n".utf8)
    let error = try #require(throws: FolioError.self) {
      try Config(bytes: bytes, file: "folio.yaml")
    }
    #expect(error.code == .invalidConfig)
    #expect(
      String(describing: error).hasPrefix("folio.yaml:3:5: error: invalid text: "),
      "\(error)")
    #expect(error.message.contains("0xFF"))
  }

  /// The classic alias bomb: nine levels of ten aliases each would expand to
  /// 10^9 strings. It must fail at the first alias, at once.
  @Test func billionLaughsFailsFast() throws {
    var yaml = "version: 1\nlol0: &lol0 \"lol\"\n"
    for level in 1...9 {
      let refs = Array(repeating: "*lol\(level - 1)", count: 10).joined(separator: ", ")
      yaml += "lol\(level): &lol\(level) [\(refs)]\n"
    }
    yaml += "tables: {a: {order: *lol9}}\n"

    let clock = ContinuousClock()
    let start = clock.now
    let error = try #require(throws: FolioError.self) { try Config(yaml: yaml) }
    let elapsed = clock.now - start

    #expect(error.code == .invalidConfig)
    #expect(String(describing: error).hasPrefix("folio.yaml:3:14: error: aliases (*lol0)"))
    #expect(elapsed < .seconds(1))
  }

  /// A large but legal-sized file must not take long either.
  @Test func largeInputStaysFast() throws {
    let yaml = "version: 1\ntables: [" + String(repeating: "[x, y], ", count: 30_000) + "]\n"
    let clock = ContinuousClock()
    let start = clock.now
    #expect(throws: FolioError.self) { try Config(yaml: yaml) }
    #expect(clock.now - start < .seconds(5))
  }
}

struct ConfigModelTests {
  @Test func kindDefaultsToRegister() {
    let table = TableConfig(name: "todos", columns: ["views": .counter, "tags": .set])
    #expect(table.kind(of: "views") == .counter)
    #expect(table.kind(of: "tags") == .set)
    #expect(table.kind(of: "title") == .register)
  }

  @Test func keyColumnIsAlwaysARegister() {
    let table = TableConfig(name: "todos", key: "slug", columns: ["slug": .counter])
    #expect(table.kind(of: "slug") == .register)
  }

  @Test(
    arguments: [
      (nil, "todos"), ("data/todos", "data/todos"), ("/data/todos/", "data/todos"),
      ("./a//b/./c/", "a/b/c"), ("a/../b", "a/../b"),
    ] as [(String?, String)])
  func initNormalisesPath(_ path: String?, _ expected: String) {
    #expect(TableConfig(name: "todos", path: path).path == expected)
  }

  @Test func tableLookup() {
    let config = Config(tables: [TableConfig(name: "a"), TableConfig(name: "b", path: "x")])
    #expect(config.table(named: "b")?.path == "x")
    #expect(config.table(named: "c") == nil)
    #expect(Config.fileName == "folio.yaml")
  }
}

struct ConfigYAMLTextTests {
  @Test func rendersTheDocumentedShape() {
    // Flat, whatever a TableConfig defaults to: a flat table's text names no layout.
    let config = Config(tables: [
      TableConfig(
        name: "todos", path: "data/todos", order: ["lastUpdate"],
        columns: ["views": .counter, "tags": .set], layout: .flat),
      TableConfig(name: "notes", layout: .flat),
    ])
    #expect(
      config.yamlText() == """
        version: 1
        tables:
          todos:
            path: data/todos
            key: id
            order: [lastUpdate]
            columns:
              tags: set
              views: counter
          notes:
            path: notes
            key: id
            order: []

        """)
  }

  @Test func rendersAndReadsTheServeSection() throws {
    let config = Config(
      tables: [TableConfig(name: "todos")],
      serve: ServeConfig(
        cors: ["https://app.example", "http://127.0.0.1:3000"], allowHosts: ["folio.example"]))
    let text = config.yamlText()
    #expect(
      text.hasSuffix(
        "serve:\n  cors: [\"https://app.example\", \"http://127.0.0.1:3000\"]\n  allow-host: [folio.example]\n"
      ))
    #expect(try Config(yaml: text) == config)
    // One name alone needs no list.
    #expect(
      try Config(yaml: "version: 1\ntables: {}\nserve:\n  cors: https://one.example\n").serve.cors == [
        "https://one.example"
      ])
    #expect(throws: FolioError.self) {
      try Config(yaml: "version: 1\ntables: {}\nserve:\n  origins: [x]\n")
    }
  }

  @Test func rendersNoTables() throws {
    #expect(Config().yamlText() == "version: 1\ntables: {}\n")
    #expect(try Config(yaml: Config().yamlText()) == Config())
  }

  static let roundTripConfigs: [Config] = [
    Config(),
    Config(tables: [
      TableConfig(
        name: "todos", path: "data/todos", order: ["lastUpdate", "meta.updatedAt"],
        columns: ["views": .counter, "tags": .set, "title": .register])
    ]),
    Config(tables: [TableConfig(name: "flights", order: ["dep_delay"], indexes: ["carrier", "o.d"])]),
    Config(tables: [TableConfig(name: "users", key: nil, columns: ["id": .counter])]),
    // Values that plain YAML would misread or that need escapes.
    Config(tables: [
      TableConfig(name: "2024", key: "true"),
      TableConfig(name: "null", path: "data/my todos", key: "~", order: ["1.5", "-x", "a,b"]),
      TableConfig(name: "yes", path: "été/ü", key: "#id"),
      TableConfig(
        name: "x",
        key: "key: with \"quotes\" and \\",
        order: ["[a]", "{b}", "c: d", "'e'", "*alias", "&anchor", "!tag", "%p", "@at", "`t"],
        columns: [
          "line\nbreak": .counter, "tab\there": .set, "bell\u{7}": .counter, "nel\u{85}": .set,
          "ls\u{2028}": .counter, "bom\u{FEFF}": .set, "emoji 🎉": .counter, "del\u{7F}": .set,
          " lead": .counter, "trail ": .set, "- dash": .counter, "? q": .set, "NULL": .counter,
          ".inf": .set, "Off": .set,
        ]),
    ]),
    Config(tables: [TableConfig(name: "t")], sync: SyncConfig(remote: "no", pullEvery: .milliseconds(250))),
    Config(sync: SyncConfig(remote: "up stream", pullEvery: nil)),
    Config(sync: SyncConfig(sshKey: "~/.ssh/id_ed25519")),
    Config(sync: SyncConfig(remote: "o", pullEvery: nil, sshKey: "keys/a key")),
    Config(index: IndexConfig(daemon: .off, idle: .seconds(90))),
    Config(tables: [TableConfig(name: "t")], index: IndexConfig(daemon: .auto, idle: .milliseconds(1500))),
  ]

  @Test func readsTheIndexSection() throws {
    let config = try Config(yaml: "version: 1\nindex:\n  daemon: off\n  idle: 1h30m\n")
    #expect(config.index == IndexConfig(daemon: .off, idle: .seconds(5400)))
    let auto = try Config(yaml: "version: 1\nindex:\n  daemon: AUTO\n")
    #expect(auto.index == IndexConfig(daemon: .auto, idle: .seconds(1800)))
    #expect(try Config(yaml: "version: 1\nindex:\n").index == IndexConfig())
    #expect(try Config(yaml: "version: 1\n").index == IndexConfig())
  }

  @Test func readsTheSyncSection() throws {
    let config = try Config(yaml: "version: 1\nsync:\n  remote: upstream\n  pull-every: 1m30s\n")
    #expect(config.sync.remote == "upstream")
    #expect(config.sync.pullEvery == .seconds(90))
    #expect(config.sync.isExplicit)
    let off = try Config(yaml: "version: 1\nsync:\n  pull-every: off\n")
    #expect(off.sync.pullEvery == nil && off.sync.remote == "origin")
    let defaults = try Config(yaml: "version: 1\n")
    #expect(defaults.sync == SyncConfig() && !defaults.sync.isExplicit)
    #expect(defaults.sync.pullEvery == .seconds(30))
  }

  @Test func readsTheSSHKey() throws {
    let config = try Config(yaml: "version: 1\nsync:\n  ssh-key: ~/.ssh/id_ed25519\n")
    #expect(config.sync.sshKey == "~/.ssh/id_ed25519")
    #expect(config.sync.isExplicit && config.sync.remote == "origin")
    let home = ["HOME": "/home/ann"]
    #expect(
      config.sync.sshKeyPath(root: "/s", settings: FolioSettings(environment: home))
        == "/home/ann/.ssh/id_ed25519")
    #expect(
      SyncConfig(sshKey: "~").sshKeyPath(root: "/s", settings: FolioSettings(environment: home))
        == "/home/ann")
    // Relative to the store root, not the working directory.
    #expect(
      SyncConfig(sshKey: "keys/deploy").sshKeyPath(
        root: "/srv/store", settings: FolioSettings(environment: [:]))
        == "/srv/store/keys/deploy")
    #expect(
      SyncConfig(sshKey: "/etc/key").sshKeyPath(root: "/s", settings: FolioSettings(environment: [:]))
        == "/etc/key")
    // The environment overrides the file; an empty variable does not.
    #expect(
      config.sync.sshKeyPath(root: "/s", settings: FolioSettings(environment: ["FOLIO_SSH_KEY": "/env/key"]))
        == "/env/key")
    #expect(
      config.sync.sshKeyPath(
        root: "/s", settings: FolioSettings(environment: ["FOLIO_SSH_KEY": "", "HOME": "/h"]))
        == "/h/.ssh/id_ed25519")
    #expect(
      SyncConfig().sshKeyPath(root: "/s", settings: FolioSettings(environment: ["FOLIO_SSH_KEY": "/env/key"]))
        == "/env/key")
    #expect(SyncConfig().sshKeyPath(root: "/s", settings: FolioSettings(environment: [:])) == nil)
  }

  /// The library reads no environment variable: `folio` hands it what its
  /// `FOLIO_*` variables say, once, and values it cannot use keep their
  /// defaults.
  @Test func settingsComeFromTheVariablesFolioReads() {
    let defaults = FolioSettings()
    #expect(FolioSettings(environment: [:]) == defaults)
    #expect(defaults.lockTimeout == 10 && defaults.indexDaemonMinimumDocuments == 20_000)
    #expect(defaults.tableLayout == nil && defaults.indexDaemon == nil && !defaults.debugIndex)
    let set = FolioSettings(environment: [
      "FOLIO_LOCK_TIMEOUT": "2.5", "FOLIO_TABLE_LAYOUT": "hashed", "FOLIO_SSH_KEY": "/k",
      "FOLIO_INDEX_DAEMON": "OFF", "FOLIO_INDEX_DAEMON_MIN_DOCUMENTS": "0", "FOLIO_DEBUG_INDEX": "1",
      "FOLIO_SPLIT_INDEX_MIN_ENTRIES": "0", "HOME": "/h",
    ])
    #expect(set.lockTimeout == 2.5 && set.tableLayout == .hashed && set.sshKey == "/k")
    #expect(set.indexDaemon == .off && set.indexDaemonMinimumDocuments == 0 && set.debugIndex)
    #expect(set.home == "/h" && set.splitIndexMinimumEntries == 0)
    let odd = FolioSettings(environment: [
      "FOLIO_LOCK_TIMEOUT": "-1", "FOLIO_TABLE_LAYOUT": "round", "FOLIO_SSH_KEY": "",
      "FOLIO_INDEX_DAEMON": "maybe", "FOLIO_INDEX_DAEMON_MIN_DOCUMENTS": "many", "FOLIO_DEBUG_INDEX": "0",
      "FOLIO_SPLIT_INDEX_MIN_ENTRIES": "-3",
    ])
    #expect(odd == defaults)
    #expect(FolioSettings(environment: ["FOLIO_INDEX_DAEMON": "yes"]).indexDaemon == .auto)
    // Every name it reads is one `folio` looks up.
    #expect(Set(FolioSettings.variableNames).count == 8)
  }

  @Test(arguments: roundTripConfigs)
  func roundTrips(_ config: Config) throws {
    let text = config.yamlText()
    let parsed = try Config(yaml: text)
    #expect(parsed == config, "\(text)")
    // Rendering is deterministic: the parsed config renders to the same bytes.
    #expect(parsed.yamlText() == text)
  }

  /// The library words an unknown table's remedy as the call that adds it,
  /// with the name as a Swift literal, and its message names no command.
  @Test func unknownTableRemedyIsTheLibraryCall() throws {
    let config = try Config(yaml: "version: 1\ntables:\n  todos:\n    path: todos\n")
    let error = config.unknownTableError("to\"do")
    #expect(error.code == .unknownTable && error.remedy == .addTable("to\"do"))
    #expect(!error.message.contains("folio "))
    #expect(
      error.description
        == #"error: UNKNOWN_TABLE: no table 'to"do' in folio.yaml; did you mean 'todos'? Tables are: todos."#
        + "\n" + #"To add it: store.addTable(TableConfig(name: "to\"do", path: "data/to\"do"))"#)
  }
}

struct ConfigFileTests {
  @Test func readsAFile() throws {
    try withScratchDirectory { dir in
      let url = dir.appendingPathComponent(Config.fileName)
      try Data("version: 1\ntables:\n  todos: {order: [lastUpdate]}\n".utf8).write(to: url)
      let config = try Config(contentsOf: url)
      // No `layout:` in the file: flat, whatever a TableConfig defaults to.
      #expect(config == Config(tables: [TableConfig(name: "todos", order: ["lastUpdate"], layout: .flat)]))
    }
  }

  @Test func errorsInAFileUseTheDisplayName() throws {
    try withScratchDirectory { dir in
      let url = dir.appendingPathComponent(Config.fileName)
      try Data("version: 1\ntables:\n  todos: {path: ../x}\n".utf8).write(to: url)
      let error = try #require(throws: FolioError.self) {
        try Config(contentsOf: url, displayName: "app/folio.yaml")
      }
      #expect(error.code == .invalidConfig)
      #expect(String(describing: error).hasPrefix("app/folio.yaml:3:17: error: "), "\(error)")
    }
  }

  @Test func missingFileIsAnIOError() throws {
    try withScratchDirectory { dir in
      let url = dir.appendingPathComponent("nope").appendingPathComponent(Config.fileName)
      let error = try #require(throws: FolioError.self) { try Config(contentsOf: url) }
      #expect(error.code == .io)
      #expect(error.path == "folio.yaml")
      #expect(error.function == "open")
      #expect(error.message.contains("No such file or directory"), "\(error)")
    }
  }

  @Test func directoryIsAnIOError() throws {
    try withScratchDirectory { dir in
      let error = try #require(throws: FolioError.self) { try Config(contentsOf: dir) }
      #expect(error.code == .io)
      #expect(error.function == "read")
      #expect(error.message.contains("Is a directory"), "\(error)")
    }
  }

  @Test func oversizedFileIsRejectedWithoutReadingItAll() throws {
    try withScratchDirectory { dir in
      let url = dir.appendingPathComponent(Config.fileName)
      try Data(repeating: UInt8(ascii: "#"), count: 3 << 20).write(to: url)
      let error = try #require(throws: FolioError.self) { try Config(contentsOf: url) }
      #expect(error.code == .invalidConfig)
      #expect(String(describing: error).hasPrefix("folio.yaml:1:1: error: "))
      #expect(error.message.contains("larger than 1 MiB"))
    }
  }

  @Test func invalidUTF8InAFile() throws {
    try withScratchDirectory { dir in
      let url = dir.appendingPathComponent(Config.fileName)
      try Data([0x76, 0x3A, 0x20, 0xC3, 0x28, 0x0A]).write(to: url)
      let error = try #require(throws: FolioError.self) { try Config(contentsOf: url) }
      #expect(error.code == .invalidConfig)
      #expect(
        String(describing: error).hasPrefix(
          "folio.yaml:1:5: error: invalid text: invalid trailing UTF-8 octet (byte 0x28)"),
        "\(error)")
    }
  }

  @Test func scratchDirectoryIsRemoved() throws {
    let dir = try withScratchDirectory { $0 }
    #expect(!FileManager.default.fileExists(atPath: dir.path))
  }
}
