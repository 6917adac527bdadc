import FolioSystem
import Foundation

/// The few settings of an OpenSSH client config file (`~/.ssh/config`) that
/// a git remote over ssh depends on.
///
/// libgit2 1.5 with libssh2 reads no ssh config, so Folio reads the lines
/// itself and applies them as `ssh` does (ssh_config(5)):
/// - `Host` lines start a block that applies when the host given on the
///   command line (the alias in the URL, before `HostName`) matches one of
///   its patterns (`*`, `?`) and none of its `!negated` ones;
/// - for each keyword, the first value obtained wins, except
///   `IdentityFile`, whose values add up;
/// - `Include` reads other files in place (relative to `~/.ssh`, with glob
///   patterns);
/// - `Match` blocks are skipped: their criteria (exec, canonical, final…)
///   need ssh's own machinery. A setting inside one never applies.
///
/// Used: `HostName`, `User`, `Port`, `IdentityFile` (with `~`, `%d`, `%u`,
/// `%h`, `%r`, `%%`), `IdentitiesOnly`, `UserKnownHostsFile`. `ProxyJump`
/// and `ProxyCommand` cannot work through libssh2 and are reported; every
/// other keyword is ignored.
struct SSHConfig {
  /// One `Keyword value…` line.
  struct Line {
    var keyword: String  // lowercased
    var arguments: [String]
    var file: String
    var number: Int
    var location: String { "\(file):\(number)" }
  }

  /// The lines, with `Include`s already read in place.
  var lines: [Line]

  /// How deep `Include`s may nest, as in ssh (which allows 16).
  static let includeDepth = 16

  /// An empty config.
  init() { lines = [] }

  /// Parses `text`, read from `file`; `Include`s are read relative to
  /// `sshDirectory`.
  init(parsing text: String, file: String, sshDirectory: String) throws {
    lines = try Self.parse(text, file: file, sshDirectory: sshDirectory, depth: 0)
  }

  /// Reads `~/.ssh/config` under `home`, or an empty config if it does
  /// not exist.
  /// - Throws: `REMOTE` when a file exists but cannot be read, or a line has
  ///   an unterminated quote.
  static func load(home: String) throws -> SSHConfig {
    try load(file: home + "/.ssh/config", sshDirectory: home + "/.ssh")
  }

  /// Reads the config file at `file` (as `ssh -F file`), or an empty config
  /// if it does not exist.
  static func load(file: String, sshDirectory: String) throws -> SSHConfig {
    var config = SSHConfig()
    config.lines = try read(file, sshDirectory: sshDirectory, depth: 0) ?? []
    return config
  }

  private static func read(_ file: String, sshDirectory: String, depth: Int) throws -> [Line]? {
    guard FileSystem.isRegularFile(file) else { return nil }
    guard let data = FileManager.default.contents(atPath: file) else {
      throw FolioError(.remote, "cannot read the ssh config file \(file)", path: file)
    }
    return try parse(
      String(decoding: data, as: UTF8.self), file: file, sshDirectory: sshDirectory, depth: depth)
  }

  private static func parse(_ text: String, file: String, sshDirectory: String, depth: Int) throws -> [Line] {
    var lines: [Line] = []
    for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let number = index + 1
      guard var words = try split(raw, file: file, number: number), !words.isEmpty else { continue }
      // `Keyword=value` and `Keyword = value` are both allowed.
      var keyword = words.removeFirst()
      if let equals = keyword.firstIndex(of: "=") {
        let rest = String(keyword[keyword.index(after: equals)...])
        keyword = String(keyword[..<equals])
        if !rest.isEmpty { words.insert(rest, at: 0) }
      } else if words.first == "=" {
        words.removeFirst()
      } else if let first = words.first, first.hasPrefix("=") {
        words[0] = String(first.dropFirst())
      }
      let line = Line(keyword: keyword.lowercased(), arguments: words, file: file, number: number)
      guard line.keyword == "include" else {
        lines.append(line)
        continue
      }
      guard depth < includeDepth else {
        throw FolioError(.remote, "\(line.location): 'Include' nests too deep", path: file)
      }
      for pattern in words {
        let expanded = expandTilde(pattern, home: (sshDirectory as NSString).deletingLastPathComponent)
        let absolute = expanded.hasPrefix("/") ? expanded : sshDirectory + "/" + expanded
        for path in glob(absolute) {
          lines += try read(path, sshDirectory: sshDirectory, depth: depth + 1) ?? []
        }
      }
    }
    return lines
  }

  /// Splits a line into words: whitespace separates, double quotes group,
  /// and `#` starts a comment where a word would start.
  private static func split(_ line: Substring, file: String, number: Int) throws -> [String]? {
    var words: [String] = []
    var current = ""
    var inWord = false
    var quoted = false
    for character in line {
      if quoted {
        if character == "\"" { quoted = false } else { current.append(character) }
      } else if character == "\"" {
        quoted = true
        inWord = true
      } else if character == " " || character == "\t" || character == "\r" {
        if inWord { words.append(current) }
        current = ""
        inWord = false
      } else if character == "#" && !inWord {
        break
      } else {
        current.append(character)
        inWord = true
      }
    }
    if quoted {
      throw FolioError(.remote, "\(file):\(number): unterminated quote in the ssh config", path: file)
    }
    if inWord { words.append(current) }
    return words
  }

  /// The file names `pattern` matches, sorted (as `Include` reads them).
  private static func glob(_ pattern: String) -> [String] {
    guard pattern.contains(where: { "*?[".contains($0) }) else { return [pattern] }
    var result = glob_t()
    defer { globfree(&result) }
    guard Glibc.glob(pattern, 0, nil, &result) == 0 else { return [] }
    return (0..<Int(result.gl_pathc)).compactMap { result.gl_pathv[$0].map { String(cString: $0) } }.sorted()
  }

  static func expandTilde(_ path: String, home: String) -> String {
    if path == "~" { return home }
    if path.hasPrefix("~/") { return home + path.dropFirst() }
    return path
  }

  /// The settings for `host`, the host as written in the URL.
  /// - Parameters:
  ///   - overrides: `-o` style lines that come first, as ssh's command line.
  func options(forHost host: String, overrides: [Line] = []) -> HostOptions {
    var options = HostOptions()
    var active = true
    var seen: Set<String> = []
    for line in overrides + lines {
      switch line.keyword {
      case "host":
        active = Self.matches(host, patterns: line.arguments)
        continue
      case "match":
        // See the type's note: Match blocks are not evaluated.
        active = false
        continue
      default: break
      }
      guard active, let value = line.arguments.first else { continue }
      if line.keyword == "identityfile" {
        options.identityFiles.append((value, line.location))
        continue
      }
      guard seen.insert(line.keyword).inserted else { continue }
      switch line.keyword {
      case "hostname": options.hostName = value
      case "user": options.user = value
      case "port": options.port = (Int(value), value, line.location)
      case "identitiesonly": options.identitiesOnly = value.lowercased() == "yes"
      case "userknownhostsfile": options.knownHostsFiles = line.arguments
      case "proxyjump", "proxycommand":
        if value.lowercased() != "none" { options.unsupported.append((line.keyword, line.location)) }
      default: break
      }
    }
    return options
  }

  /// Whether `host` matches a `Host` line: one positive pattern matches and
  /// no negated one does (a negated match wins).
  static func matches(_ host: String, patterns: [String]) -> Bool {
    var matched = false
    for pattern in patterns.flatMap({ $0.split(separator: ",").map(String.init) }) {
      if pattern.hasPrefix("!") {
        if wildcard(String(pattern.dropFirst()), host) { return false }
      } else if wildcard(pattern, host) {
        matched = true
      }
    }
    return matched
  }

  /// ssh's pattern match: `*` any run, `?` one character, case-insensitive
  /// as ssh compares host names.
  static func wildcard(_ pattern: String, _ text: String) -> Bool {
    let p = Array(pattern.lowercased().unicodeScalars)
    let t = Array(text.lowercased().unicodeScalars)
    var pi = 0
    var ti = 0
    var star: Int?
    var resume = 0
    while ti < t.count {
      if pi < p.count, p[pi] == "?" || p[pi] == t[ti] {
        pi += 1
        ti += 1
      } else if pi < p.count, p[pi] == "*" {
        star = pi
        resume = ti
        pi += 1
      } else if let star {
        pi = star + 1
        resume += 1
        ti = resume
      } else {
        return false
      }
    }
    while pi < p.count, p[pi] == "*" { pi += 1 }
    return pi == p.count
  }
}
