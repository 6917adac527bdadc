import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import Glibc

/// The state the last scan or commit left (``WorkTreeState``), which the
/// next scan starts from.
extension WorkTreeScan {
  var workTreeStatePath: String { store.privateDirectory + "/worktree" }

  /// The state the last status or commit left, if it still holds: git's
  /// index and HEAD are what it names.
  func currentWorkTreeState(head: GitOID?, repository: GitRepository) -> WorkTreeState? {
    let indexPath = repository.gitDirectory + "/index"
    guard let bytes = (try? FileSystem.read(workTreeStatePath)) ?? nil,
      var state = (try? JSONValue(parsing: bytes)).flatMap(WorkTreeState.init(json:)),
      state.head == head?.description, let checksum = WorkTreeScan.indexChecksum(indexPath)
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
      indexDirectory: store.privateDirectory + "/index", since: token, reached: &reached)
    if !reached { link.publisherMissed(store: store, documents: documents()) }
    return answer
  }
}
