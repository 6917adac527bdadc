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

extension Store {
  var workTreeStatePath: String { privateDirectory + "/worktree" }

  /// The state the last status or commit left, if it still holds: git's
  /// index and HEAD are what it names.
  func currentWorkTreeState(head: GitOID?, repository: GitRepository) -> WorkTreeState? {
    let indexPath = repository.gitDirectory + "/index"
    guard let bytes = (try? FileSystem.read(workTreeStatePath)) ?? nil,
      var state = (try? JSONValue(parsing: bytes)).flatMap(WorkTreeState.init(json:)),
      state.head == head?.description, let checksum = Self.indexChecksum(indexPath)
    else { return nil }
    if checksum == state.index { return state }
    // Rewritten since, as a plain `git status` does to refresh stat data:
    // the state holds if the index still holds HEAD's files. That is a walk
    // of the index and HEAD's tree, and no stat of any file.
    guard let file = try? GitIndexFile.open(indexPath), SHA1.hex(file.checksum) == checksum,
      (try? file.holds(try head.map { try repository.commit($0).tree() }, repository: repository)) == true
    else { return nil }
    state.index = checksum
    saveWorkTreeState(state)
    return state
  }

  /// Saves `state`; a failure only costs the next status its shortcut.
  func saveWorkTreeState(_ state: WorkTreeState) {
    try? FileSystem.writeAtomically(workTreeStatePath, state.json.compactBytes(), sync: false)
  }

  /// Forgets the state: the next status looks at every file.
  func forgetWorkTreeState() {
    _ = try? FileSystem.remove(workTreeStatePath)
  }

  /// The trailing checksum of the index file at `path`, in hex.
  static func indexChecksum(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0, st.st_size >= 32 else { return nil }
    var bytes = [UInt8](repeating: 0, count: 20)
    guard pread(fd, &bytes, 20, st.st_size - 20) == 20 else { return nil }
    return SHA1.hex(bytes)
  }

  /// What a publisher saw change since `token`, or nil when none answers.
  /// A store large enough to be worth it starts an index daemon when none
  /// answers, as a query does, so the next status is quick.
  func changedFiles(since token: String?, documents: () -> Int) -> ChangedFiles? {
    guard let link = OrderIndexCache.publisherLink else { return nil }
    var reached = false
    let answer = link.changedFiles(
      indexDirectory: privateDirectory + "/index", since: token, reached: &reached)
    if !reached { link.publisherMissed(store: self, documents: documents()) }
    return answer
  }
}
