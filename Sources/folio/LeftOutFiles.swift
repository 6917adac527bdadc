import Folio

/// How `query`, `export`, `status` and `commit` report document files they
/// left out because they do not parse: each on stderr as
/// `path:line:col: warning: left out: …` with the line and a caret, and
/// exit status 3, so that a script can tell a complete answer (0) from one
/// without some files (3) and from a failure (1).
enum LeftOutFiles {
  /// The exit status of a command that did its work but left files out.
  static let exitStatus: Int32 = 3

  /// Prints `errors` and returns the exit status: 0 when there are none.
  static func report(_ errors: [FolioError]) -> Int32 {
    let sorted = errors.sorted { ($0.location?.file ?? $0.path ?? "") < ($1.location?.file ?? $1.path ?? "") }
    for error in sorted { Output.error(text(error)) }
    return errors.isEmpty ? 0 : exitStatus
  }

  /// One left-out file as it is printed.
  static func text(_ error: FolioError) -> String {
    let place = error.location.map { "\($0): " } ?? error.path.map { "\($0): " } ?? ""
    return place + "warning: left out: " + error.message + (error.excerpt.map { "\n" + $0 } ?? "")
  }
}
