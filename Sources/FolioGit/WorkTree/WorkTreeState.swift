import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import Glibc

/// What the last status or commit knew about the working tree, so that the
/// next looks only at what changed since (`.git/folio/worktree`).
///
/// It is written only when git's index held exactly HEAD's tree (after a
/// commit, a checkout, or a status that found it so), and it is trusted
/// only while both are still what it names: HEAD by its commit, git's
/// index by its checksum, or, once someone rewrote the index (a plain
/// `git status` refreshes stat data), by a walk that finds it still holds
/// HEAD's files. Then a document file differs from HEAD only if it
/// is in ``dirty``, a publisher named it since ``token``
/// (``ChangedFiles``), or an op this replica logged names it; everything
/// else is as committed, and needs no `stat`.
struct WorkTreeState {
  /// A replica's op log as committed: its inode, its committed length (the
  /// log only grows by appends, so the committed ops are the first `size`
  /// bytes while the inode is the same) and the committed blob.
  struct CommittedLog {
    var inode: UInt64
    var size: Int
    var blob: String
  }

  /// The commit HEAD named.
  var head: String?
  /// The trailing checksum of git's index file, in hex.
  var index: String
  /// The publisher's token from before the scan that wrote this state; nil
  /// when no publisher answered.
  var token: String?
  /// By table, the file names that differed from HEAD, or could not be
  /// read, at that scan: they are looked at again.
  var dirty: [String: [String]]
  /// This replica's op log as committed.
  var ownLog: CommittedLog?

  var json: JSONValue {
    var object: JSONObject = [
      "head": head.map { .string($0) } ?? .null, "index": .string(index),
      "token": token.map { .string($0) } ?? .null,
      "dirty": .object(JSONObject(dirty.keys.sorted().map { ($0, .array(dirty[$0]!.map { .string($0) })) })),
    ]
    if let ownLog {
      object["ownLog"] = [
        "inode": .string(String(ownLog.inode)), "size": .integer(Int64(ownLog.size)),
        "blob": .string(ownLog.blob),
      ]
    }
    return .object(object)
  }

  init(head: String?, index: String, token: String?, dirty: [String: [String]], ownLog: CommittedLog?) {
    self.head = head
    self.index = index
    self.token = token
    self.dirty = dirty
    self.ownLog = ownLog
  }

  init?(json: JSONValue) {
    guard let index = json["index"]?.stringValue, case .object(let dirty)? = json["dirty"] else { return nil }
    self.index = index
    head = json["head"]?.stringValue
    token = json["token"]?.stringValue
    self.dirty = [:]
    for (table, names) in dirty {
      guard let names = names.arrayValue?.compactMap(\.stringValue) else { return nil }
      self.dirty[table] = names
    }
    if let log = json["ownLog"], let inode = log["inode"]?.stringValue.flatMap({ UInt64($0) }),
      let size = log["size"]?.numberText.flatMap({ Int($0) }), let blob = log["blob"]?.stringValue
    {
      ownLog = CommittedLog(inode: inode, size: size, blob: blob)
    }
  }
}
