import Foundation
import Glibc

// folio-bench partial: what a partial replica (folio clone --tables) costs
// to make, beside a full folio clone and a full git clone of the same store.
// Run: bash scripts/build-release.sh && .build/release/folio-bench partial

/// The sizes and repetitions of `folio-bench partial`.
struct PartialCloneBenchOptions {
  /// Documents of the big table, one store per size.
  var sizes = [100_000, 300_000]
  /// Documents of the small table, the one the partial clone holds.
  var small = 1_000
  /// Timed repetitions; medians are printed.
  var runs = 3
  /// Where the stores are made (emptied first).
  var directory = NSTemporaryDirectory() + "folio-partial-bench"

  init(_ arguments: [String]) {
    forEachBenchArgument(arguments) { flag, value in
      switch flag {
      case "--sizes":
        sizes = value().split(separator: ",").map {
          guard let n = Int($0), n > 0 else { fatalError("--sizes takes numbers, such as 100000,300000") }
          return n
        }
      case "--small": small = max(1, Int(value()) ?? 1_000)
      case "--runs": runs = max(1, Int(value()) ?? 3)
      case "--dir": directory = value()
      case "-h", "--help":
        print(
          """
          USAGE: folio-bench partial [--sizes 100000,300000] [--small 1000] [--runs 3] [--dir DIR]

          For each size: a store of two tables, 'big' with that many documents and 'small'
          with --small, made with folio init and folio import and pushed to a bare remote
          with uploadpack.allowFilter on. Then, median of --runs, each into an empty folder
          over file://:
            folio clone --tables small   the partial replica
            folio clone                  a full replica
            git clone --no-local         plain git's full clone (no hard links)
            git clone --filter=blob:none --sparse, then git sparse-checkout set data/small
                                         plain git's partial clone of the same table
          with the time and the disk each clone takes (du). Ratios are folio/git: below 1,
          Folio is faster.
          """)
        exit(0)
      default: fatalError("unknown option \(flag); see --help")
      }
    }
  }
}

func runPartialCloneBenchmark(_ arguments: [String]) throws {
  let options = PartialCloneBenchOptions(arguments)
  let folio = folioBinaryBesideBench()
  print(
    "big docs | folio clone --tables small | disk | git partial clone + sparse checkout | disk | ratio | "
      + "folio clone | disk | git clone | disk | ratio"
  )
  for docs in options.sizes {
    let root = options.directory + "/\(docs)"
    shell("rm -rf '\(root)' && mkdir -p '\(root)/a'")
    var big: [UInt8] = []
    big.reserveCapacity(docs * 60)
    for i in 0..<docs { big += Array(#"{"id":"b\#(i)","v":\#(i),"title":"item \#(i)"}"#.utf8) + [10] }
    _ = FileManager.default.createFile(atPath: root + "/big.ndjson", contents: Data(big))
    let small = (0..<options.small).map { #"{"id":"s\#($0)","n":\#($0)}"# + "\n" }.joined()
    try small.write(toFile: root + "/small.ndjson", atomically: true, encoding: .utf8)
    let made = shell(
      "'\(folio)' init >/dev/null && '\(folio)' tables add big >/dev/null && '\(folio)' tables add small >/dev/null"
        + " && '\(folio)' import big ../big.ndjson >/dev/null && '\(folio)' import small ../small.ndjson >/dev/null"
        + " && git init -q --bare ../remote.git && git -C ../remote.git config uploadpack.allowFilter true"
        + " && git -C ../remote.git symbolic-ref HEAD refs/heads/main"
        + " && git remote add origin ../remote.git && '\(folio)' sync >/dev/null",
      in: root + "/a")
    precondition(made.status == 0, made.output)
    var rows: [String: [Double]] = [:]
    var disk: [String: Double] = [:]
    let clones = [
      ("partial", "'\(folio)' clone remote.git DIR --tables small"),
      (
        "git partial",
        "git clone -q --filter=blob:none --sparse file://$PWD/remote.git DIR && git -C DIR sparse-checkout set data/small"
      ),
      ("full", "'\(folio)' clone remote.git DIR"),
      ("git", "git clone -q --no-local remote.git DIR"),
    ]
    // Each clone into a fresh folder, all removed after the last: ext4
    // passes over inodes freed in the last 30 s when it allocates one, so
    // a clone just after removing another would time the file system.
    for run in 0..<options.runs {
      for (name, command) in clones {
        let folder = "c-\(run)-" + name.replacingOccurrences(of: " ", with: "-")
        let timed = command.replacingOccurrences(of: "DIR", with: folder)
        rows[name, default: []].append(runMeasured(timed, in: root).seconds)
        let du =
          shell("du -sk \(folder)", in: root).output.split(separator: "\t").first.flatMap { Double($0) } ?? 0
        disk[name] = du / 1024
      }
    }
    func ms(_ name: String) -> Double { benchMedianOf(rows[name] ?? [0]) * 1000 }
    func row(_ folio: String, _ git: String) -> String {
      String(
        format: "%.0f ms | %.0f MB | %.0f ms | %.0f MB | %.2fx", ms(folio), disk[folio] ?? 0, ms(git),
        disk[git] ?? 0, ms(folio) / max(ms(git), 0.001))
    }
    print("\(docs) | \(row("partial", "git partial")) | \(row("full", "git"))")
    shell("rm -rf '\(root)'", in: "/")
  }
}
