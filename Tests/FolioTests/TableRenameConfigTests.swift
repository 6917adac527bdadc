import FolioCore
import FolioSystem
import Testing

/// `renamed-from:` in folio.yaml: what a rename leaves for merges to read.
@Suite struct TableRenameConfigTests {
  @Test func renamesGiveTheOldFolderAndName() throws {
    let config = try Config(
      yaml: """
        version: 1
        tables:
          tasks:
            path: data/tasks
            renamed-from: [todos, chores]
          notes:
            path: elsewhere/stuff
            renamed-from: [memos]
          plain:
            renamed-from: [simple]
        """)
    #expect(
      config.renames == [
        TableRename(oldName: "todos", newName: "tasks", oldPath: "data/todos", newPath: "data/tasks"),
        TableRename(oldName: "chores", newName: "tasks", oldPath: "data/chores", newPath: "data/tasks"),
        TableRename(
          oldName: "memos", newName: "notes", oldPath: "elsewhere/stuff", newPath: "elsewhere/stuff"),
        TableRename(oldName: "simple", newName: "plain", oldPath: "simple", newPath: "plain"),
      ])
    #expect(config.currentTableName("todos") == "tasks")
    #expect(config.currentTableName("tasks") == "tasks")
    #expect(config.currentTableName("nobody") == "nobody")
    // It round-trips through the YAML Folio writes.
    #expect(try Config(yaml: config.yamlText()) == config)
  }

  @Test(arguments: [
    (
      "version: 1\ntables:\n  tasks:\n    renamed-from: [notes]\n  notes:\n",
      "folio.yaml:4:20: error: 'notes' in 'renamed-from' of table 'tasks' is the name of a table"
    ),
    (
      "version: 1\ntables:\n  tasks:\n    renamed-from: [todos]\n  notes:\n    renamed-from: [todos]\n",
      "folio.yaml:6:20: error: 'todos' is in 'renamed-from' of both table 'tasks' and table 'notes'"
    ),
    (
      "version: 1\ntables:\n  tasks:\n    renamed-from: [tasks]\n",
      "folio.yaml:4:20: error: table 'tasks' lists its own name in 'renamed-from'"
    ),
    (
      "version: 1\ntables:\n  tasks:\n    renamed-from: [a/b]\n",
      "folio.yaml:4:20: error: invalid table name 'a/b': use letters, digits, '_', '-' and '.', and do not start with '.' or '-'"
    ),
    (
      "version: 1\ntables:\n  tasks:\n    renamed-from: todos\n",
      "folio.yaml:4:19: error: 'renamed-from' of table 'tasks' must be a list of strings; found a plain scalar"
    ),
  ])
  func formerNamesAreChecked(yaml: String, message: String) throws {
    let error = try #require(throws: FolioError.self) { try Config(yaml: yaml) }
    #expect(error.headline == message)
  }

  @Test func theEditorRenamesInPlace() throws {
    let yaml = """
      version: 1
      tables:
        todos:   # the list
          order: [due]
        notes:
          path: data/notes
          renamed-from:
            - memos
      """
    let (text, table) = try ConfigEditor(text: yaml).renaming(table: "todos", to: "tasks")
    #expect(
      text == """
        version: 1
        tables:
          tasks:   # the list
            order: [due]
            renamed-from: [todos]
          notes:
            path: data/notes
            renamed-from:
              - memos

        """)
    #expect(table.path == "tasks")
    let (again, notes) = try ConfigEditor(text: text).renaming(table: "notes", to: "papers")
    #expect(notes.path == "data/papers" && notes.renamedFrom == ["memos", "notes"])
    #expect(
      again.contains("  papers:\n    path: data/papers\n    renamed-from:\n      - memos\n      - notes\n"))
  }
}
