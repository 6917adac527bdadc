/// The options of `GIT_SSH_COMMAND` that Folio can honour.
///
/// libgit2 does not run an ssh program, so the command itself is never run.
/// From its arguments Folio takes `-i KEY`, `-p PORT`, `-l USER`,
/// `-F CONFIG` and `-o Keyword=value` (read like a config line that comes
/// first, as on ssh's command line). Everything else in it is ignored.
struct SSHCommandLine {
  var identityFiles: [String] = []
  var port: Int?
  var user: String?
  var configFile: String?
  var options: [SSHConfig.Line] = []

  init(_ command: String) {
    var words = Self.words(command)
    guard !words.isEmpty else { return }
    words.removeFirst()  // the program
    var index = 0
    while index < words.count {
      let word = words[index]
      index += 1
      guard word.count >= 2, word.hasPrefix("-"), "ipFlo".contains(word[word.index(after: word.startIndex)])
      else { continue }
      let flag = word[word.index(after: word.startIndex)]
      var value = String(word.dropFirst(2))
      if value.isEmpty {
        guard index < words.count else { break }
        value = words[index]
        index += 1
      }
      switch flag {
      case "i": identityFiles.append(value)
      case "p": port = Int(value)
      case "l": user = value
      case "F": configFile = value
      default:
        let parts = value.split(separator: "=", maxSplits: 1).map(String.init)
        let keyword = parts.count == 2 ? parts[0] : String(value.prefix { $0 != " " })
        let argument = parts.count == 2 ? parts[1] : String(value.dropFirst(keyword.count + 1))
        options.append(
          SSHConfig.Line(
            keyword: keyword.lowercased(), arguments: [argument], file: "GIT_SSH_COMMAND", number: 1))
      }
    }
  }

  /// Splits like a shell for the simple cases: whitespace, and single or
  /// double quotes.
  private static func words(_ command: String) -> [String] {
    var words: [String] = []
    var current = ""
    var inWord = false
    var quote: Character?
    for character in command {
      if let open = quote {
        if character == open { quote = nil } else { current.append(character) }
      } else if character == "'" || character == "\"" {
        quote = character
        inWord = true
      } else if character == " " || character == "\t" || character == "\n" {
        if inWord { words.append(current) }
        current = ""
        inWord = false
      } else {
        current.append(character)
        inWord = true
      }
    }
    if inWord { words.append(current) }
    return words
  }
}
