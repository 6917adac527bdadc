import FolioSystem
import Glibc

extension SystemGit {
  /// Fetches `branch` of remote `remote` into its ref under
  /// ``incomingNamespace``, not into the remote-tracking ref.
  /// - Returns: the incoming ref's name, or nil when the remote has no such
  ///   branch (yet).
  /// - Throws: what ``error(_:remote:url:)`` makes of a failure.
  func fetch(remote: String, branch: String, url: String?) throws -> String? {
    let incoming = Self.incomingNamespace + remote + "/" + branch
    // A git that an interrupted Folio started ends at once (it was tied to
    // that Folio), but may still hold the incoming ref's lock for a moment:
    // a few tries, further apart each time, outlast it. A lock that stays
    // is reported (a git killed by kill -9 leaves its lock file).
    var tries = 0
    var result: Subprocess.Result
    repeat {
      if tries > 0 { usleep(UInt32(50_000 * tries * tries)) }
      tries += 1
      // An empty --refmap: git would otherwise also move the configured
      // remote-tracking ref at once, before Folio has validated the tip.
      result = try transfer(
        "fetch", ["--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--refmap="],
        operands: [remote, "+refs/heads/\(branch):\(incoming)"])
    } while result.status != 0 && tries < 6
      && Self.refLock(in: result.errorText.split(separator: "\n").map(String.init)) != nil
    if result.status == 0 { return incoming }
    // A branch the remote does not have is not a failure of the fetch;
    // `ls-remote --exit-code` tells it apart by its exit code alone.
    let listed = try run(["ls-remote", "--exit-code", "--heads", "--", remote, "refs/heads/" + branch])
    if listed.status == 2 { return nil }
    throw error(result, remote: remote, url: url)
  }

  /// Fetches `refs/heads/<branch>` from `url` with `git fetch-pack`, which
  /// stores the objects and moves no ref, for a remote git reaches with its
  /// own protocol (``speaksNatively(_:)``).
  ///
  /// `git fetch` then proves the new tip connected with a walk of every
  /// tree of every ref (`rev-list --objects --not --all`), whose cost grows
  /// with the store: 160 ms of a sync pulling 10 documents at 300,000.
  /// The pack's own check proves as much here: `transfer.fsckObjects` has
  /// index-pack refuse a pack with an object that names one that is
  /// neither in the pack nor already stored, and the objects already
  /// stored are complete.
  /// - Parameter uploadPack: `remote.<name>.uploadpack`, when set.
  /// - Returns: the tip's id in hex, or nil when the remote has no such
  ///   branch (yet).
  /// - Throws: what ``error(_:remote:url:)`` makes of a failure.
  func fetchPack(url: String, uploadPack: String?, remote: String, branch: String, shownURL: String?) throws
    -> String?
  {
    let ref = "refs/heads/" + branch
    let progress = Self.stderrIsTerminal
    var arguments = ["fetch-pack", "--thin"]
    if !progress { arguments.append("--no-progress") }
    if let uploadPack { arguments.append("--upload-pack=" + uploadPack) }
    // One pack, never a `.keep` file that would outlive this run (the
    // limit's default unpacks a small fetch into loose objects, or locks a
    // large one's pack until a `git fetch` that is not coming unlocks it).
    let result = try run(
      arguments + [url, ref], settings: [("fetch.unpackLimit", "0")], forwardingStderr: progress)
    if result.status == 0 {
      for line in result.outputText.split(separator: "\n") {
        let fields = line.split(separator: " ", maxSplits: 1)
        if fields.count == 2, fields[1] == ref, fields[0].utf8.count == 40 { return String(fields[0]) }
      }
      throw FolioError(
        .remote, "git fetch-pack did not say which commit \(ref) of remote '\(remote)' is",
        function: "git fetch-pack")
    }
    let listed = try run(["ls-remote", "--exit-code", "--heads", "--", url, ref])
    if listed.status == 2 { return nil }
    throw error(result, remote: remote, url: shownURL)
  }

  /// Whether git reaches `url` with its own protocol, through
  /// `git-upload-pack` (a path, `file://`, `ssh://`, scp-like `host:path`,
  /// `git://`), rather than through a remote helper (`https://`,
  /// `transport::address`). A URL that starts with `-` is left to
  /// `git fetch`, which takes it after `--`.
  static func speaksNatively(_ url: String) -> Bool {
    if url.hasPrefix("-") || url.contains("::") { return false }
    guard let scheme = url.range(of: "://").map({ url[..<$0.lowerBound].lowercased() }) else { return true }
    return ["file", "ssh", "git", "git+ssh", "ssh+git"].contains(scheme)
  }

  /// The URL git fetches remote `name` from, with `url.<base>.insteadOf`
  /// applied as git applies it.
  func fetchURL(remote name: String) throws -> String? {
    let result = try run(["ls-remote", "--get-url", "--", name])
    guard result.status == 0 else { return nil }
    let url = result.outputText.trimmingCharacters(in: .newlines)
    return url.isEmpty || url.contains("\n") ? nil : url
  }

  /// Pushes local `branch` to `remoteBranch` on `remote`.
  /// - Throws: ``PushRefusal`` when the remote did not take the update, as
  ///   `--porcelain` reports it per ref; what ``error(_:remote:url:)``
  ///   makes of any other failure.
  func push(remote: String, branch: String, to remoteBranch: String, url: String?) throws {
    let result = try transfer(
      "push", ["--porcelain", "--no-verify", "--no-recurse-submodules"],
      operands: [remote, "refs/heads/\(branch):refs/heads/\(remoteBranch)"])
    if let refusal = Self.refusal(porcelain: result.outputText) { throw refusal }
    if result.status != 0 { throw error(result, remote: remote, url: url) }
  }

  /// Clones `url` into `path` without checking anything out: the fetched
  /// tree is untrusted, and the caller validates it before writing a file.
  /// - Parameter partial: fetch commits and trees but no blob (git's
  ///   `--filter=blob:none`); the caller fetches the blobs it wants with
  ///   ``fetchObjects(_:remote:)``.
  /// - Throws: `REMOTE` naming the server setting when the remote cannot
  ///   filter (git would quietly copy every blob instead).
  func clone(url: String, into path: String, partial: Bool = false) throws {
    // A path is cloned by copying files unless told otherwise, and a copy
    // cannot leave blobs out.
    let filter = partial ? ["--no-local", "--filter=blob:none"] : []
    let result = try transfer(
      "clone", ["--no-checkout", "--no-tags", "--origin", "origin"] + filter, operands: [url, path])
    if result.status != 0 { throw error(result, remote: "origin", url: url) }
    if partial && result.errorText.contains("filtering not recognized by server") {
      throw FolioError(
        .remote,
        "\(url) cannot leave tables out of a clone: its git server does not filter what it sends. "
          + "Turn filtering on in the remote repository (git config uploadpack.allowFilter true), "
          + "or clone every table (leave out --tables)",
        function: "git clone")
    }
  }

  /// Fetches the objects `ids` (in hex) from `remote`, as git's own partial
  /// clone fetches a missing blob: by id, with no negotiation, moving no
  /// ref. In batches, to keep each command line short.
  func fetchObjects(_ ids: [String], remote: String, url: String?) throws {
    for start in stride(from: 0, to: ids.count, by: Self.objectsPerFetch) {
      let batch = Array(ids[start..<min(start + Self.objectsPerFetch, ids.count)])
      let result = try run(
        [
          "fetch", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--filter=blob:none",
          "--no-progress", "--", remote,
        ] + batch, settings: [("fetch.negotiationAlgorithm", "noop")], forwardingStderr: false)
      if result.status != 0 { throw error(result, remote: remote, url: url) }
    }
  }

  /// How many ids one `git fetch` of objects names (41 bytes each on its
  /// command line).
  static let objectsPerFetch = 8192

  /// The refusal `git push --porcelain` reports for the pushed ref, if any:
  /// a line `!<TAB>from:to<TAB>[rejected] (reason)` or `[remote rejected]`.
  static func refusal(porcelain: String) -> PushRefusal? {
    for line in porcelain.split(separator: "\n") where line.hasPrefix("!\t") {
      let fields = line.split(separator: "\t", maxSplits: 2)
      let summary = fields.count > 2 ? String(fields[2]) : ""
      // `[rejected]` is git's own check before sending: the remote's tip
      // is not in this push's history. `[remote rejected]` and
      // `[remote failure]` come from the server (a hook, a lost race for
      // its ref lock).
      if summary.hasPrefix("[rejected]") { return PushRefusal(reason: .remoteAhead, detail: summary) }
      return PushRefusal(reason: .refused, detail: summary)
    }
    return nil
  }
}
