import Folio
import FolioSystem
import Foundation

// folio-bench history: the history commands on the sync benchmark's store
// shape (N documents, C of them changed in the next commit), as whole
// processes, medians of R runs taken in turn:
//   - `folio diff HEAD~1 HEAD --stat` against `git diff --stat HEAD~1 HEAD`;
//   - `folio query --as-of HEAD~1` against the same query on HEAD: a first
//     page in key order, and a --where filter (which reads every document
//     of the commit, as there is no index of a past commit);
//   - `folio blame` of a document with K ops, and `folio history` of it.
// Run: bash scripts/build-release.sh && .build/release/folio-bench history [--docs N] [--changes C] [--ops K]

struct HistoryBenchOptions {
  var docs = 100_000
  var changes = 10_000
  var ops = 10_000
  var runs = 5
  var directory = NSTemporaryDirectory() + "/folio-history-bench"
  var keep = false

  init(_ arguments: [String]) {
    forEachBenchArgument(arguments) { flag, value in
      switch flag {
      case "--docs": docs = Int(value()) ?? docs
      case "--changes": changes = Int(value()) ?? changes
      case "--ops": ops = Int(value()) ?? ops
      case "--runs": runs = Int(value()) ?? runs
      case "--dir": directory = value()
      case "--keep": keep = true
      case "-h", "--help":
        print(
          """
          USAGE: folio-bench history [--docs N] [--changes C] [--ops K] [--runs R] [--dir DIR]
            --docs N      documents in the table (default 100000)
            --changes C   documents the second commit changes (default 10000)
            --ops K       ops on the blamed document, in 10 commits (default 10000)
            --runs R      runs of each command; medians are reported (default 5)
            --dir DIR     scratch directory (default $TMPDIR/folio-history-bench; emptied first)
            --keep        keep the store in DIR afterwards, to profile the commands again
          """)
        exit(0)
      default: fatalError("unknown option \(flag); see --help")
      }
    }
  }
}

func runHistoryBenchmark(_ arguments: [String]) throws {
  let options = HistoryBenchOptions(arguments)
  let folio = folioBinaryBesideBench()
  let root = options.directory
  let store = try makeHistoryStore(root: root, folio: folio, options: options)
  func compare(_ label: String, folioArguments: [String], peer: (String, [String]), peerName: String) {
    var ours: [Double] = []
    var theirs: [Double] = []
    for run in 0..<options.runs {
      if run % 2 == 0 {
        ours.append(try! spawnTimed(folio, ["-C", root] + folioArguments))
        theirs.append(try! spawnTimed(peer.0, peer.1))
      } else {
        theirs.append(try! spawnTimed(peer.0, peer.1))
        ours.append(try! spawnTimed(folio, ["-C", root] + folioArguments))
      }
    }
    let (a, b) = (benchMedianOf(ours), benchMedianOf(theirs))
    print(
      String(
        format: "%@ (medians of %d): folio %.1f ms, %@ %.1f ms: folio/%@ %.2fx", label, options.runs,
        a * 1000,
        peerName, b * 1000, peerName, a / b))
  }
  compare(
    "diff --stat of \(options.changes) changed documents among \(options.docs)",
    folioArguments: ["diff", "HEAD~1", "HEAD", "--stat"],
    peer: ("/usr/bin/git", ["-C", root, "diff", "--stat", "HEAD~1", "HEAD"]), peerName: "git diff --stat")
  compare(
    "first page (50, key order) as of HEAD~1",
    folioArguments: ["query", "items", "--order-by-key", "--limit-to-first", "50", "--as-of", "HEAD~1"],
    peer: (folio, ["-C", root, "query", "items", "--order-by-key", "--limit-to-first", "50"]),
    peerName: "the same on HEAD")
  compare(
    "--where 'views > 990' as of HEAD~1",
    folioArguments: ["query", "items", "--where", "views > 990", "--count", "--as-of", "HEAD~1"],
    peer: (folio, ["-C", root, "query", "items", "--where", "views > 990", "--count"]),
    peerName: "the same on HEAD")
  try writeHotDocument(store, ops: options.ops)
  try measureBlame(store, folio: folio, root: root, options: options)
  if !options.keep { shell("rm -rf '\(root)'", in: "/") }
}

/// A store at `root` of `options.docs` documents, committed, then
/// `options.changes` of them changed in a second commit, packed.
private func makeHistoryStore(root: String, folio: String, options: HistoryBenchOptions) throws -> Store {
  shell("rm -rf '\(root)'", in: "/")
  try writeItemsStoreFiles(at: root, docs: options.docs)
  let store = try Store.create(at: URL(fileURLWithPath: root), mergeDriver: folio)
  try store.commit(message: "import")
  print("changing \(options.changes) documents…")
  var start = 0
  while start < options.changes {
    let end = min(options.changes, start + 1000)
    try store.write { tx in
      for i in start..<end {
        try tx.apply(
          table: "items", pk: "d\(i * (options.docs / options.changes))", op: .update,
          columns: ["title": .string("changed \(i)")], transforms: ["views": ["op": "increment", "by": 1]])
      }
    }
    start = end
  }
  try store.commit(message: "changes")
  shell("git gc -q", in: root)
  shell("sync", in: "/")
  return store
}

/// Writes `ops` ops on one document, `hot`, in 10 commits.
private func writeHotDocument(_ store: Store, ops: Int) throws {
  print("writing \(ops) ops on one document, in 10 commits…")
  try store.apply(table: "items", pk: "hot", op: .insert, columns: ["title": "hot", "views": 0, "tags": []])
  let perCommit = max(1, ops / 10)
  var written = 1
  var commit = 0
  while written < ops {
    let count = min(perCommit, ops - written)
    try store.write { tx in
      for n in 0..<count {
        let transforms: JSONObject =
          n % 10 == 0
          ? ["tags": ["op": "arrayUnion", "values": .array([.string("m\((written + n) % 50)")])]]
          : ["views": ["op": "increment", "by": 1]]
        try tx.apply(
          table: "items", pk: "hot", op: .update, columns: n % 7 == 0 ? ["title": .string("t\(n)")] : [:],
          transforms: transforms)
      }
    }
    written += count
    commit += 1
    try store.commit(message: "hot \(commit)")
  }
}

/// Blame and history of `hot`, against `git log` of its file.
private func measureBlame(_ store: Store, folio: String, root: String, options: HistoryBenchOptions) throws {
  var inProcess: [Double] = []
  var blame: [Double] = []
  var history: [Double] = []
  var gitLog: [Double] = []
  for _ in 0..<options.runs {
    inProcess.append(try seconds { _ = try store.blame(table: "items", pk: "hot") })
    blame.append(try spawnTimed(folio, ["-C", root, "blame", "items", "hot"]))
    history.append(try spawnTimed(folio, ["-C", root, "history", "items", "hot"]))
    gitLog.append(try spawnTimed("/usr/bin/git", ["-C", root, "log", "--format=%H", "--", "items/hot.json"]))
  }
  print(
    String(
      format:
        "blame of a document with %d ops (medians of %d): folio blame %.1f ms as a process, Store.blame %.1f ms in process",
      options.ops, options.runs, benchMedianOf(blame) * 1000, benchMedianOf(inProcess) * 1000))
  print(
    String(
      format:
        "history of that document: folio history %.1f ms, git log -- items/hot.json %.1f ms: folio/git %.2fx",
      benchMedianOf(history) * 1000, benchMedianOf(gitLog) * 1000,
      benchMedianOf(history) / benchMedianOf(gitLog)))
}
