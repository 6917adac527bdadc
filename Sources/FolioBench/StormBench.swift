import Foundation

// folio-bench storm: many replicas push to one remote at the same moment.
//   Each round, every replica increments one shared counter and adds a
//   document of its own, then all run `folio sync` at once; a push that
//   loses the race is retried by the sync itself. The peer is plain git:
//   the same replicas each change a file of their own (so nothing
//   conflicts) and run `git pull --no-rebase && git push`, retried the same
//   way by a shell loop. Prints syncs per second, retries per sync and
//   failures for each, per transport (a path and `git daemon`).
// Run: bash scripts/build-release.sh && .build/release/folio-bench storm [--replicas N] [--rounds R]

struct StormBenchOptions {
  var replicas = 16
  var rounds = 10
  var directory = NSTemporaryDirectory() + "/folio-storm-bench"

  init(_ arguments: [String]) {
    forEachBenchArgument(arguments) { flag, value in
      switch flag {
      case "--replicas": replicas = Int(value()) ?? replicas
      case "--rounds": rounds = Int(value()) ?? rounds
      case "--dir": directory = value()
      case "-h", "--help":
        print(
          """
          USAGE: folio-bench storm [--replicas N] [--rounds R] [--dir DIR]
            --replicas N  replicas syncing at once (default 16)
            --rounds R    rounds; every replica syncs once per round (default 10)
            --dir DIR     scratch directory (default $TMPDIR/folio-storm-bench; emptied first)
          """)
        exit(0)
      default: fatalError("unknown option \(flag); see --help")
      }
    }
  }
}

/// What one storm gave.
struct StormResult {
  var syncs = 0
  var failed = 0
  var retries = 0
  var seconds = 0.0
  /// Whether every replica's counter ends at the sum of all increments
  /// (nil for plain git, which has no counter).
  var exact: Bool?
  var rate: Double { Double(syncs - failed) / seconds }
}

func runStormBenchmark(_ arguments: [String]) throws {
  let options = StormBenchOptions(arguments)
  let folio = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path + "/folio"
  guard FileManager.default.isExecutableFile(atPath: folio) else {
    fatalError("no folio next to folio-bench")
  }
  print("push storm: \(options.replicas) replicas × \(options.rounds) rounds, all syncing at once")
  print("| transport | tool | syncs | failed | syncs/s | retries/sync | counters exact | ratio (syncs/s) |")
  print("|---|---|---|---|---|---|---|---|")
  for transport in ["path", "git"] {
    let base = options.directory + "/" + transport
    try? FileManager.default.removeItem(atPath: base)
    try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
    var daemon: Process?
    defer { if let daemon { kill(daemon.processIdentifier, SIGKILL) } }
    let url: (String) -> String
    if transport == "git" {
      let port = Int.random(in: 20_000..<30_000)
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/lib/git-core/git-daemon")
      process.arguments = [
        "--reuseaddr", "--export-all", "--enable=receive-pack", "--listen=127.0.0.1", "--port=\(port)",
        "--base-path=\(base)", base,
      ]
      process.standardError = FileHandle.nullDevice
      try process.run()
      daemon = process
      while shell("git ls-remote git://127.0.0.1:\(port)/none 2>&1 | grep -q 'Connection refused'", in: "/")
        .status == 0
      {
        usleep(20_000)
      }
      url = { "git://127.0.0.1:\(port)/\($0)" }
    } else {
      url = { base + "/" + $0 }
    }
    let folioResult = try stormFolio(folio, base: base, url: url("folio.git"), options)
    let gitResult = stormGit(base: base, url: url("git.git"), options)
    for (tool, result) in [("folio sync", folioResult), ("git pull + push", gitResult)] {
      let ratio = tool == "git pull + push" ? "" : String(format: "%.2fx", folioResult.rate / gitResult.rate)
      print(
        "| \(transport) | \(tool) | \(result.syncs) | \(result.failed) | \(String(format: "%.2f", result.rate)) | "
          + "\(String(format: "%.2f", Double(result.retries) / Double(result.syncs))) | "
          + "\(result.exact.map { $0 ? "yes" : "NO" } ?? "—") | \(ratio) |")
    }
  }
}

private func stormFolio(_ folio: String, base: String, url: String, _ options: StormBenchOptions) throws
  -> StormResult
{
  shell("git init -q --bare folio.git", in: base)
  let first = base + "/f0"
  try FileManager.default.createDirectory(atPath: first, withIntermediateDirectories: true)
  try "version: 1\ntables:\n  c:\n    path: c\n    columns:\n      n: counter\n".write(
    toFile: first + "/folio.yaml", atomically: false, encoding: .utf8)
  let f = "'\(folio)'"
  shell(
    "\(f) init && echo '{\"n\":0}' | \(f) put c x - && git remote add origin '\(url)' && \(f) sync", in: first
  )
  for k in 1..<options.replicas { shell("\(f) clone '\(url)' f\(k)", in: base) }
  var result = StormResult()
  for round in 0..<options.rounds {
    for k in 0..<options.replicas {
      shell(
        "\(f) apply c x --op update --transforms '{\"n\":{\"op\":\"increment\",\"by\":1}}' && "
          + "echo '{\"k\":\(k)}' | \(f) put c f\(k)-\(round) -", in: base + "/f\(k)")
    }
    let all = (0..<options.replicas).map {
      "(cd f\($0) && \(f) sync --json > ../out-\($0) 2>&1; echo $? >> ../out-\($0)) &"
    }
    result.seconds += seconds { shell(all.joined(separator: "\n") + "\nwait", in: base) }
    for k in 0..<options.replicas {
      let output = (try? String(contentsOfFile: base + "/out-\(k)", encoding: .utf8)) ?? ""
      result.syncs += 1
      if !output.hasSuffix("\n0\n") { result.failed += 1 }
      if let range = output.range(of: #""rounds":"#) {
        result.retries += (Int(output[range.upperBound...].prefix { $0.isNumber }) ?? 1) - 1
      }
    }
  }
  for _ in 0..<2 { for k in 0..<options.replicas { shell("\(f) sync", in: base + "/f\(k)") } }
  let expected = "\"n\": \(options.replicas * options.rounds)"
  result.exact = true
  for k in 0..<options.replicas {
    let text = (try? String(contentsOfFile: base + "/f\(k)/c/x.json", encoding: .utf8)) ?? ""
    if !text.contains(expected) { result.exact = false }
  }
  return result
}

private func stormGit(base: String, url: String, _ options: StormBenchOptions) -> StormResult {
  shell("git init -q --bare -b main git.git", in: base)
  shell(
    "mkdir g0 && cd g0 && git init -q -b main && echo 0 > shared && git add shared && git commit -qm seed && "
      + "git remote add origin '\(url)' && git push -q origin main", in: base)
  for k in 1..<options.replicas { shell("git clone -q '\(url)' g\(k)", in: base) }
  var result = StormResult()
  let attempts = 20
  for round in 0..<options.rounds {
    for k in 0..<options.replicas {
      shell(
        "echo \(round) > g\(k)-file && git add -A && git commit -qm 'g\(k) \(round)'", in: base + "/g\(k)")
    }
    // The same retry policy as folio sync: up to 20 tries, full jitter.
    let loop = """
      tries=0; ok=1
      for i in $(seq 0 \(attempts - 1)); do
        tries=$((tries+1))
        if git pull -q --no-rebase --no-edit origin main && git push -q origin main; then ok=0; break; fi
        cap=$(( 25000 << (i < 16 ? i : 16) )); [ $cap -gt 2000000 ] && cap=2000000
        r=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
        sleep $(awk -v c=$cap -v r=$r 'BEGIN{printf "%.6f", (r % c)/1e6}')
      done
      echo "$tries $ok"
      """
    try? loop.write(toFile: base + "/push-loop.sh", atomically: false, encoding: .utf8)
    let all = (0..<options.replicas).map { "(cd g\($0) && sh ../push-loop.sh > ../gout-\($0) 2>/dev/null) &" }
    result.seconds += seconds { shell(all.joined(separator: "\n") + "\nwait", in: base) }
    for k in 0..<options.replicas {
      let fields = ((try? String(contentsOfFile: base + "/gout-\(k)", encoding: .utf8)) ?? "")
        .split(whereSeparator: \.isWhitespace)
      result.syncs += 1
      if fields.count != 2 || fields[1] != "0" { result.failed += 1 }
      result.retries += max(0, (fields.first.flatMap { Int($0) } ?? 1) - 1)
    }
  }
  return result
}
