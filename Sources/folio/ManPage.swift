import Folio

/// Man pages made from the help text (`folio help --man [COMMAND]`), so
/// that `man folio-query` says what `folio help query` says, word for word.
enum ManPage {
  /// The roff source of `folio(1)` (when `command` is nil) or
  /// `folio-NAME(1)`: a name line, then the help text as it is printed,
  /// kept in a no-fill block so that its columns stay as they are.
  static func roff(for command: (any Command.Type)?, topHelp: String) -> String {
    let title = command.map { "folio-" + $0.name } ?? "folio"
    let summary = command?.abstract ?? "keep a database as files in a git repository"
    let text = command?.help ?? topHelp
    var page = ".TH \(escape(title.uppercased())) 1 \"\" \"folio \(Folio.version)\" \"Folio Manual\"\n"
    page += ".SH NAME\n\(escape(title)) \\- \(escape(summary))\n"
    page += ".SH DESCRIPTION\n.nf\n"
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      page += escape(String(line)) + "\n"
    }
    page += ".fi\n"
    if command != nil { page += ".SH SEE ALSO\n.BR folio (1)\n" }
    return page
  }

  /// A line as roff shows it literally: backslashes doubled, `-` kept a
  /// hyphen-minus, and a leading `.` or `'` not taken for a request.
  static func escape(_ line: String) -> String {
    var out = line.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
    if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
    return out
  }
}
