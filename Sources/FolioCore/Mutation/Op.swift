import FolioJSON
import FolioSystem

/// A mutation as recorded in the op log: stamped, and naming its document.
///
/// One op is one NDJSON line in `.folio/ops/<replica>.ndjson`:
/// ```json
/// {"hlc":"1764424342123-0000-3f9c…","op":"update","pk":"3f2a","set":{"done":true},"table":"todos","transforms":{"views":{"by":1,"op":"increment"}},"unset":["draft"]}
/// ```
/// Paths are ``FieldPath`` text. A path with several transforms maps to an
/// array of them, in order.
///
/// A bulk import logs each row compactly, without its body, and marks it
/// `"tree":true`: the document's content is whatever the commit holds (see
/// ``fromTree``).
public struct Op: Sendable, Hashable {
  /// When, and on which replica.
  public var hlc: HLC
  /// The table.
  public var table: String
  /// The document.
  public var pk: String
  /// What changed.
  public var mutation: Mutation
  /// Whether the op only says that the document was written (by an import)
  /// and its content is to be taken from the tree it was committed in. Such
  /// an op replays as nothing; a commit takes the file as it is, and a merge
  /// explains the side's document by a diff (so that an import is
  /// recorded compactly and its content taken from the tree).
  public var fromTree: Bool

  /// Creates an op.
  public init(hlc: HLC, table: String, pk: String, mutation: Mutation, fromTree: Bool = false) {
    self.hlc = hlc
    self.table = table
    self.pk = pk
    self.mutation = mutation
    self.fromTree = fromTree
  }

  /// The JSON form written to the log.
  public var json: JSONValue {
    var object: JSONObject = [
      "hlc": .string(hlc.description), "table": .string(table), "pk": .string(pk),
      "op": .string(mutation.kind.rawValue),
    ]
    var set = JSONObject()
    var unset: [JSONValue] = []
    for assignment in mutation.assignments {
      if let value = assignment.value {
        set[assignment.path.description] = value
      } else {
        unset.append(.string(assignment.path.description))
      }
    }
    if !set.isEmpty { object["set"] = .object(set) }
    if !unset.isEmpty { object["unset"] = .array(unset) }
    if fromTree { object["tree"] = true }
    if !mutation.transforms.isEmpty {
      var transforms = JSONObject()
      for entry in mutation.transforms {
        let key = entry.path.description
        switch transforms[key] {
        case nil: transforms[key] = entry.transform.json
        case .array(let list)?: transforms[key] = .array(list + [entry.transform.json])
        case let single?: transforms[key] = .array([single, entry.transform.json])
        }
      }
      object["transforms"] = .object(transforms)
    }
    return .object(object)
  }

  /// Appends the op's log line to `line`: ``json`` in compact form, then a
  /// newline. An op with no assignments or transforms (an import logs one
  /// per row) is spelled out directly, to the same bytes, without building
  /// the object.
  package func appendLogLine(to line: inout [UInt8]) {
    guard mutation.assignments.isEmpty, mutation.transforms.isEmpty,
      hlc.replica.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
    else {
      line += json.compactBytes()
      line.append(UInt8(ascii: "\n"))
      return
    }
    var writer = JSONWriter(reservingCapacity: 0)
    swap(&writer.bytes, &line)
    defer { swap(&writer.bytes, &line) }
    // The keys in code point order, as compact form sorts them.
    writer.bytes += #"{"hlc":""#.utf8
    hlc.appendText(to: &writer.bytes)
    writer.bytes += #"","op":"#.utf8
    writer.writeString(mutation.kind.rawValue)
    writer.bytes += #","pk":"#.utf8
    writer.writeString(pk)
    writer.bytes += #","table":"#.utf8
    writer.writeString(table)
    if fromTree { writer.bytes += #","tree":true"#.utf8 }
    writer.bytes += "}\n".utf8
  }

  /// Reads an op from its JSON form.
  /// - Throws: `INVALID_JSON` naming the field that is wrong.
  public init(json: JSONValue) throws {
    func fail(_ message: String) -> FolioError { FolioError(.invalidJSON, "op log entry: \(message)") }
    guard case .object(let object) = json else { throw fail("expected an object") }
    guard let hlcText = object["hlc"]?.stringValue, let hlc = HLC(hlcText) else {
      throw fail("missing or malformed 'hlc'")
    }
    guard let table = object["table"]?.stringValue else { throw fail("missing 'table'") }
    guard let pk = object["pk"]?.stringValue else { throw fail("missing 'pk'") }
    guard let opName = object["op"]?.stringValue, let kind = Mutation.Kind(rawValue: opName) else {
      throw fail("missing or unknown 'op'")
    }
    // Past this point every error names the document the op is for.
    func failFor(_ message: String) -> FolioError {
      FolioError(.invalidJSON, "op log entry for \(table)/\(pk): \(message)", table: table, pk: pk)
    }
    var mutation = Mutation(kind: kind)
    if let set = object["set"] {
      guard case .object(let members) = set else { throw failFor("'set' must be an object") }
      for (path, value) in members {
        mutation.assignments.append(.init(path: FieldPath(path), value: value))
      }
    }
    if let unset = object["unset"] {
      guard case .array(let paths) = unset else { throw failFor("'unset' must be an array") }
      for path in paths {
        guard let text = path.stringValue else { throw failFor("'unset' must hold strings") }
        mutation.assignments.append(.init(path: FieldPath(text), value: nil))
      }
    }
    if let transforms = object["transforms"] {
      guard case .object(let members) = transforms else {
        throw failFor("'transforms' must be an object")
      }
      for (path, value) in members {
        let list = value.arrayValue ?? [value]
        for item in list {
          do {
            mutation.transforms.append(
              .init(path: FieldPath(path), transform: try Transform(json: item, column: path)))
          } catch var error as FolioError {
            error.message = "op log entry for \(table)/\(pk): " + error.message
            (error.table, error.pk) = (table, pk)
            throw error
          }
        }
      }
    }
    self.init(
      hlc: hlc, table: table, pk: pk, mutation: mutation, fromTree: object["tree"]?.boolValue ?? false)
  }
}
