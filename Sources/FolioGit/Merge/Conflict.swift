import FolioCore
import FolioJSON
import FolioSystem

/// A value that a concurrent assignment overwrote in a merge: two replicas
/// set the same path without either having seen the other's write, and the
/// later stamp won (the replay merge's rule: the later stamp wins). The loser is kept here so that a
/// person can see it and choose.
///
/// Each merge that meets such a pair commits one record file,
/// `.folio/conflicts/<sha1>.json`, named by the hash of its canonical bytes.
/// Every replica that merges the same commits writes the same file, so the
/// folder merges as a plain union of files, like the op logs. A record stays
/// open until an op that saw it touches the path (`folio conflicts resolve`,
/// or any later assignment, unset or remove made after the merge arrived).
///
/// ```swift
/// for conflict in try store.conflicts() {
///   print(conflict.table, conflict.pk, conflict.path, conflict.losingValue, "lost to", conflict.winningValue ?? "unset")
/// }
/// ```
public struct Conflict: Sendable, Hashable {
  /// The table.
  public var table: String
  /// The document.
  public var pk: String
  /// The field path whose value was lost.
  public var path: FieldPath
  /// The stamp of the assignment that won (for a listed conflict, the
  /// latest one).
  public var winningStamp: HLC
  /// The value that won, nil when the winner unset the path.
  public var winningValue: JSONValue?
  /// The stamp of the overwritten assignment.
  public var losingStamp: HLC
  /// The overwritten value.
  public var losingValue: JSONValue

  /// The replica that wrote the winning value.
  public var winningReplica: String { winningStamp.replica }
  /// The replica that wrote the losing value.
  public var losingReplica: String { losingStamp.replica }

  /// Creates a conflict.
  public init(
    table: String, pk: String, path: FieldPath, winningStamp: HLC, winningValue: JSONValue?,
    losingStamp: HLC, losingValue: JSONValue
  ) {
    self.table = table
    self.pk = pk
    self.path = path
    self.winningStamp = winningStamp
    self.winningValue = winningValue
    self.losingStamp = losingStamp
    self.losingValue = losingValue
  }

  /// The folder of the record files, in the store and in commits.
  static let folder = ".folio/conflicts"

  /// The JSON form: the record file's content, and one line of
  /// `folio conflicts --json`.
  public var json: JSONValue {
    var winner: JSONObject = ["stamp": .string(winningStamp.description), "replica": .string(winningReplica)]
    if let winningValue { winner["value"] = winningValue }
    return .object([
      "table": .string(table), "pk": .string(pk), "path": .string(path.description),
      "winner": .object(winner),
      "loser": .object([
        "stamp": .string(losingStamp.description), "replica": .string(losingReplica), "value": losingValue,
      ]),
    ])
  }

  /// The record file's bytes (canonical JSON).
  var recordBytes: [UInt8] { json.canonicalBytes() }

  /// The record file's path in a commit: named by the SHA-1 of its bytes,
  /// so equal records are one file and different ones never collide.
  var recordPath: String { Self.recordPath(for: recordBytes) }

  /// The path of the record whose bytes are `bytes` (``recordBytes``).
  static func recordPath(for bytes: [UInt8]) -> String {
    var hash = SHA1()
    hash.update(bytes)
    return Conflict.folder + "/" + SHA1.hex(hash.finish()) + ".json"
  }
}
