import Folio
import Foundation
import Glibc

// folio-bench scale: what a small operation costs as the store grows, Folio
// beside plain git on the same documents. Run:
// bash scripts/build-release.sh && .build/release/folio-bench scale

/// The sizes and repetitions of `folio-bench scale`.
struct ScaleBenchOptions {
  /// Store sizes, in documents.
  var sizes = [10_000, 100_000, 300_000, 1_000_000]
  /// Timed repetitions of each row; medians are printed.
  var runs = 3
  /// Documents each commit and each pull changes.
  var changes = 10
  /// Where the stores are made (emptied first).
  var directory = NSTemporaryDirectory() + "folio-scale-bench"
  /// The table's layout; nil for what `folio tables add` chooses.
  var layout: TableLayout?

  init(_ arguments: [String]) {
    forEachBenchArgument(arguments) { flag, value in
      switch flag {
      case "--sizes":
        sizes = value().split(separator: ",").map {
          guard let n = Int($0), n > 0 else { fatalError("--sizes takes numbers, such as 10000,100000") }
          return n
        }
      case "--runs": runs = max(1, Int(value()) ?? 3)
      case "--changes": changes = max(1, Int(value()) ?? 10)
      case "--dir": directory = value()
      case "--layout":
        guard let chosen = TableLayout(rawValue: value()) else {
          fatalError("--layout takes nested, hashed or flat")
        }
        layout = chosen
      case "-h", "--help":
        print(
          """
          USAGE: folio-bench scale [--sizes 10000,100000,300000,1000000] [--runs 3] [--changes 10] [--dir DIR]
                                   [--layout nested|hashed|flat]

          For each size: a store of that many documents, made as a user makes one (folio init,
          folio tables add, folio import of an NDJSON file; --layout overrides the default
          layout), then, median of --runs, each a whole process:
            folio status           against git status (a plain git clone of the same commit)
            commit of --changes    folio commit against git add -A && git commit
            sync pulling --changes folio sync --no-push against git pull, after another replica pushed
            put, get, first page   folio put, folio get, folio query --limit-to-first 20
          and the peak RSS of folio status. Ratios are folio/git: below 1, Folio is faster.
          Folio runs as users get it: the index daemon is on (FOLIO_INDEX_DAEMON=auto). The first
          status of a large store starts it and the second takes its first token; both run before
          the timed rows, as a warm page cache does for git. Needs /usr/bin/time (Debian's time).
          """)
        exit(0)
      default: fatalError("unknown option \(flag); see --help")
      }
    }
  }
}

func runScaleBenchmark(_ arguments: [String]) throws {
  let options = ScaleBenchOptions(arguments)
  let folio = folioBinaryBesideBench()
  let git = shell("command -v git", in: "/").output.trimmingCharacters(in: .whitespacesAndNewlines)
  print(
    "docs | folio status | git status | ratio | commit \(options.changes) | git add+commit | ratio | sync pulling \(options.changes) | git pull | ratio | RSS of status | put | get | first page"
  )
  // As users get it: a large store's status starts the index daemon.
  setenv("FOLIO_INDEX_DAEMON", "auto", 1)
  for docs in options.sizes {
    let root = options.directory + "/\(docs)"
    let replicas = try ScaleReplicas(root: root, docs: docs, folio: folio, layout: options.layout)
    // Warm-up: the first status starts the daemon, the second takes the
    // journal's first token; git's first status warms the page cache.
    for _ in 0..<2 {
      for replica in [replicas.folio, replicas.folioPeer] {
        _ = shell("'\(folio)' -C '\(replica)' status >/dev/null", in: "/")
        if docs >= 20_000 { waitForIndexDaemon(folio, replica) }
      }
      _ = shell("git -C '\(replicas.git)' status --porcelain >/dev/null", in: "/")
    }
    defer {
      for replica in [replicas.folio, replicas.folioPeer] {
        _ = shell("'\(folio)' -C '\(replica)' index-daemon --stop >/dev/null 2>&1", in: "/")
      }
    }
    var rows: [String: [Double]] = [:]
    func time(_ name: String, _ path: String, _ arguments: [String]) throws {
      rows[name, default: []].append(try spawnTimed(path, arguments))
    }
    for round in 0..<options.runs {
      try time("folio status", folio, ["-C", replicas.folio, "status"])
      try time("git status", git, ["-C", replicas.git, "status", "--porcelain"])
      replicas.edit(in: replicas.folio, round: round, count: options.changes, by: "a")
      try time("folio commit", folio, ["-C", replicas.folio, "commit", "-m", "round \(round)"])
      replicas.edit(in: replicas.git, round: round, count: options.changes, by: "a")
      try time(
        "git commit", "/bin/sh",
        ["-c", "cd '\(replicas.git)' && git add -A && git -c gc.auto=0 commit -q -m r"])
      try replicas.pushFromOthers(round: round, count: options.changes, folio: folio)
      try time("folio sync", folio, ["-C", replicas.folio, "sync", "--no-push"])
      try time(
        "git pull", "/bin/sh",
        ["-c", "cd '\(replicas.git)' && git -c gc.auto=0 pull -q --no-rebase --no-edit origin main"])
      try time("put", folio, ["-C", replicas.folio, "put", "items", "p\(round)", root + "/doc.json"])
      try time("get", folio, ["-C", replicas.folio, "get", "items", "d\(docs / 2)"])
      try time("first page", folio, ["-C", replicas.folio, "query", "items", "--limit-to-first", "20"])
    }
    let rss = runMeasured("'\(folio)' status", in: replicas.folio).peakMB
    func ms(_ name: String) -> Double { benchMedianOf(rows[name] ?? [0]) * 1000 }
    func pair(_ a: String, _ b: String) -> String {
      String(format: "%.0f ms | %.0f ms | %.2fx", ms(a), ms(b), ms(a) / max(ms(b), 0.001))
    }
    print(
      "\(docs) | \(pair("folio status", "git status")) | \(pair("folio commit", "git commit")) | "
        + "\(pair("folio sync", "git pull")) | "
        + String(format: "%.0f MB | %.0f ms | %.0f ms | %.0f ms", rss, ms("put"), ms("get"), ms("first page"))
    )
  }
}

/// Waits until the store at `path` has an index daemon running (a status
/// starts one only for a store of 20,000 documents or more).
func waitForIndexDaemon(_ folio: String, _ path: String) {
  for _ in 0..<200 {
    let status = shell("'\(folio)' -C '\(path)' index-daemon --status", in: "/").output
    if status.contains("running") { return }
    usleep(50_000)
  }
}

/// The stores of one size of `folio-bench scale`: Folio's replica `a` and
/// `b`, plain git's clones `g` and `h`, all of one bare remote that starts
/// with the same commit of `docs` documents.
struct ScaleReplicas {
  let root: String
  var folio: String { root + "/a" }
  var folioPeer: String { root + "/b" }
  var git: String { root + "/g" }
  var gitPeer: String { root + "/h" }

  /// The table's layout, as `folio tables add` chose it.
  let items: TableConfig

  /// Makes the store as a user would, with no layout option: `folio init`,
  /// `folio tables add`, then `folio import` of an NDJSON file.
  init(root: String, docs: Int, folio: String, layout: TableLayout?) throws {
    self.root = root
    shell("rm -rf '\(root)' && mkdir -p '\(root)/a'", in: "/")
    print("writing \(docs) documents…")
    var text: [UInt8] = []
    text.reserveCapacity(docs * 110)
    for i in 0..<docs {
      let document: JSONObject = [
        "id": .string("d\(i)"), "views": .number(String(i % 1000)), "title": .string("item \(i)"),
        "tags": .array([.string("t\(i % 7)")]), "price": .number("\(i % 500).25"),
      ]
      text += JSONValue.object(document).compactBytes()
      text.append(UInt8(ascii: "\n"))
    }
    _ = FileManager.default.createFile(atPath: root + "/items.ndjson", contents: Data(text))
    try #"{"title": "put", "views": 0}"#.write(toFile: root + "/doc.json", atomically: true, encoding: .utf8)
    print("importing, committing and cloning \(docs) documents…")
    let a = root + "/a"
    let chosen = layout.map { " --layout \($0.rawValue)" } ?? ""
    let made = shell(
      "'\(folio)' init && '\(folio)' tables add items --path items --counter views --set tags\(chosen) >/dev/null "
        + "&& '\(folio)' import items '\(root)/items.ndjson' -m import >/dev/null "
        + "&& '\(folio)' commit -m config >/dev/null", in: a)
    precondition(made.status == 0, made.output)
    items = try Store(at: URL(fileURLWithPath: a)).table(named: "items")
    let remote = root + "/remote.git"
    shell(
      "git clone -q --bare '\(root)/a' '\(remote)' && git -C '\(root)/a' remote add origin '\(remote)' && git -C '\(root)/a' fetch -q origin && git -C '\(root)/a' branch -q -u origin/main main",
      in: "/")
    _ = try Store.clone(url: "file://" + remote, into: URL(fileURLWithPath: root + "/b"))
    // Plain git's clones: git's own index, and no Folio merge driver
    // configured, so git merges the table files itself.
    for name in ["g", "h"] {
      shell("git clone -q '\(remote)' '\(root)/\(name)'", in: "/")
    }
    shell("sync", in: "/")
  }

  /// Rewrites `count` documents of the replica at `path`, as an editor
  /// saves them, each with a title naming the round and the writer.
  func edit(in path: String, round: Int, count: Int, by writer: String) {
    for k in 0..<count {
      let id = "d\(round * 997 + k * 31 + (writer == "a" ? 0 : 13))"
      let text =
        "{\n  \"id\": \"\(id)\",\n  \"title\": \"\(writer) round \(round)\",\n  \"views\": \(round)\n}\n"
      guard let file = try? items.path(of: id) else { continue }
      try? text.write(toFile: path + "/" + file, atomically: true, encoding: .utf8)
    }
  }

  /// The other replicas each push `count` changed documents: what the
  /// timed sync and pull then bring in.
  func pushFromOthers(round: Int, count: Int, folio: String) throws {
    edit(in: folioPeer, round: round, count: count, by: "b")
    let pushed = shell("'\(folio)' sync", in: folioPeer)
    precondition(pushed.status == 0, pushed.output)
    edit(in: gitPeer, round: round, count: count, by: "b")
    let plain = shell(
      "git add -A && git -c gc.auto=0 commit -q -m b && git pull -q --no-rebase --no-edit && git push -q",
      in: gitPeer)
    precondition(plain.status == 0, plain.output)
  }
}
