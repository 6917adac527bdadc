import Folio

struct ApplyCommand: Command {
  static let name = "apply"
  static let abstract = "Apply one mutation, with transforms, exactly as the API's apply does."
  static let usage =
    "folio apply TABLE (PK | --where EXPR [--dry-run] [--strict]) --op insert|update|upsert|remove [--columns JSON] [--transforms JSON]"
  static let details = """
    ARGUMENTS:
      TABLE               The table.
      PK                  The document's pk.

    OPTIONS:
      --where EXPR        Instead of PK: every document that matches EXPR (the
                          language of 'folio query --where'), in one transaction,
                          one recorded op per document. Not with insert.
      --dry-run           With --where: print the pks that would change, change nothing.
      --strict            With --where: a field no document has is an error (exit 64), not a
                          warning; nothing is written.
      --op OP             insert, update, upsert or remove.
      --columns JSON      A JSON object of columns to assign (applied first).
      --transforms JSON   A JSON object mapping columns to transforms (applied on top):
                            {"views": {"op": "increment", "by": 1},
                             "tags": {"op": "arrayUnion", "values": ["x"]}}

    Prints each change as one NDJSON line. An update of a missing document prints
    nothing. A malformed transform prints 'error: LOCAL_CONSTRAINT: …', exits 1, and
    changes no file.

    With --where, a filter that matches nothing prints a note to stderr and exits 0.

    EXAMPLES:
      folio apply todos 3f2a --op update --columns '{"done":true}' \\
        --transforms '{"views":{"op":"increment","by":1}}'
      folio apply todos --where 'done == false' --op update --columns '{"done":true}'
    """

  var table: String
  /// The target: one pk, or a filter (seed `002_*` "Write with filters").
  var target: WriteTarget
  var op: Mutation.Kind
  var columns: String?
  var transforms: String?

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(
      arguments, options: WriteTarget.options.union(["--op", "--columns", "--transforms"]),
      flags: WriteTarget.flags)
    (table, target) = try WriteTarget.parse(parsed)
    guard let name = parsed.value("--op") else { throw UsageError("missing '--op'") }
    guard let op = Mutation.Kind(rawValue: name) else {
      throw UsageError("unknown op '\(name)'; expected insert, update, upsert or remove")
    }
    self.op = op
    columns = parsed.value("--columns")
    transforms = parsed.value("--transforms")
  }

  func run(in context: CommandContext) throws -> Int32 {
    let columns = try objectArgument(self.columns, name: "--columns")
    let transforms = try objectArgument(self.transforms, name: "--transforms")
    let store = try context.openStore()
    switch target {
    case .pk(let pk):
      let results = try store.apply(
        table: table, pk: pk, op: op, columns: columns, transforms: transforms)
      for result in results { Output.print(result.json.compactString) }
    case .filter(let expression, let dryRun, _):
      try target.checkFields(store, table: table)
      let outcome = try store.apply(
        table: table, where: expression, op: op, columns: columns, transforms: transforms, dryRun: dryRun)
      target.report(outcome, table: table)
    }
    return 0
  }

  /// The argument as an object: a JSONObject, not a dictionary, so twin
  /// keys ("\u{E9}" and "e\u{301}") stay two columns.
  private func objectArgument(_ text: String?, name: String) throws -> JSONObject {
    guard let text else { return [:] }
    // Text that is not JSON is a mistake in the command line (usage, 64);
    // JSON of the wrong shape is the mutation's own error (seed 002).
    let value: JSONValue
    do {
      value = try parseJSON(text, source: name)
    } catch let error as FolioError {
      throw UsageError("\(name) is not valid JSON: \(error.headline)")
    }
    guard case .object(let object) = value else {
      throw FolioError(
        .localConstraint, "\(name) must be a JSON object keyed by column, not \(value.kindName)")
    }
    return object
  }
}
