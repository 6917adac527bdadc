import FolioCore
import FolioJSON

/// One change between two versions of the store: a document added or
/// removed, or one JSON path inside a document that changed.
///
/// A counter column's change carries its ``delta``; a set column's carries
/// the members it gained and lost. Objects are compared member by member
/// down to their leaves; arrays and other values are compared whole.
public struct DocumentChange: Sendable, Equatable {
  /// What happened at ``path``.
  public enum Kind: String, Sendable {
    case added, removed, changed
  }

  /// The table.
  public var table: String
  /// The document's pk.
  public var pk: String
  /// What happened.
  public var change: Kind
  /// The JSON pointer of the path (`/title`, `/address/city`); empty when
  /// the whole document was added or removed.
  public var path: String
  /// The value before, nil when the path was added.
  public var old: JSONValue?
  /// The value after, nil when the path was removed.
  public var new: JSONValue?
  /// For a counter column: the value after less the value before (a
  /// missing counter counts as 0).
  public var delta: DecimalInteger?
  /// For a set column: the members the value after has and the value
  /// before had not.
  public var membersAdded: [JSONValue]?
  /// For a set column: the members the value before had and the value
  /// after has not.
  public var membersRemoved: [JSONValue]?

  /// The change as one NDJSON line's object:
  /// `{"table":"todos","pk":"a","change":"changed","path":"/title","old":"x","new":"y"}`.
  public var json: JSONValue {
    var members: [(String, JSONValue)] = [
      ("table", .string(table)), ("pk", .string(pk)), ("change", .string(change.rawValue)),
      ("path", .string(path)),
    ]
    if let old { members.append(("old", old)) }
    if let new { members.append(("new", new)) }
    if let delta { members.append(("delta", .number(delta.description))) }
    if let membersAdded { members.append(("added", .array(membersAdded))) }
    if let membersRemoved { members.append(("removed", .array(membersRemoved))) }
    return .object(JSONObject(members))
  }

  /// The changes from `old` to `new` (nil: no such document) of document
  /// `pk`, path by path, read through `table`'s column kinds.
  static func changes(table: TableConfig, pk: String, old: JSONObject?, new: JSONObject?) -> [DocumentChange]
  {
    switch (old, new) {
    case (nil, nil): return []
    case (nil, let new?):
      return [DocumentChange(table: table.name, pk: pk, change: .added, path: "", new: .object(new))]
    case (let old?, nil):
      return [DocumentChange(table: table.name, pk: pk, change: .removed, path: "", old: .object(old))]
    case (let old?, let new?):
      var result: [DocumentChange] = []
      compare(.object(old), .object(new), at: [], table: table, pk: pk, into: &result)
      return result
    }
  }

  private static func compare(
    _ old: JSONValue?, _ new: JSONValue?, at tokens: [String], table: TableConfig, pk: String,
    into result: inout [DocumentChange]
  ) {
    if case .object(let before)? = old, case .object(let after)? = new {
      var keys = before.keys
      let known = Set(keys)
      keys += after.keys.filter { !known.contains($0) }
      for key in keys.sorted() {
        compare(before[key], after[key], at: tokens + [key], table: table, pk: pk, into: &result)
      }
      return
    }
    if old == new { return }
    var change = DocumentChange(
      table: table.name, pk: pk, change: old == nil ? .added : new == nil ? .removed : .changed,
      path: JSONPointer(tokens).description, old: old, new: new)
    switch table.kind(of: tokens.joined(separator: ".")) {
    case .counter:
      if let after = number(new ?? .number("0")), let before = number(old ?? .number("0")) {
        change.delta = after - before
      }
    case .set:
      let before = members(old)
      let after = members(new)
      change.membersAdded = after.filter { member in !before.contains(member) }
      change.membersRemoved = before.filter { member in !after.contains(member) }
    case .register:
      break
    }
    result.append(change)
  }

  /// A counter's value: a number, or the decimal text a counter past 32
  /// bits is kept as.
  private static func number(_ value: JSONValue?) -> DecimalInteger? {
    switch value {
    case .number(let text)?, .string(let text)?: DecimalInteger(text)
    case .null?: DecimalInteger(0)
    default: nil
    }
  }

  private static func members(_ value: JSONValue?) -> [JSONValue] {
    if case .array(let members)? = value { return members }
    return []
  }
}
