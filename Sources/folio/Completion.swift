import Folio
import Foundation

/// Shell completion, computed by `folio __complete` from the commands' own
/// definitions (their names and usage and help text), so that the scripts
/// `folio completion bash|zsh|fish` prints stay a few lines that ask it.
///
/// Table names come from the store's `folio.yaml`, document keys from the
/// table, wherever a command's usage line names a `TABLE` or a `PK`.
enum Completion {
  /// The words to offer for word `index` of `words` (`words[0]` is
  /// `folio`), in the store at or above `directory`.
  static func candidates(words: [String], index: Int, directory: String) -> [String] {
    guard index >= 1, index <= words.count else { return [] }
    let current = index < words.count ? words[index] : ""
    var directory = directory
    var at = 1
    while at < index, words[at].hasPrefix("-") {
      if words[at] == "-C", at + 1 < words.count {
        directory = URL(fileURLWithPath: words[at + 1], relativeTo: URL(fileURLWithPath: directory)).path
        at += 2
      } else {
        at += 1
      }
    }
    if at == index {
      if current.hasPrefix("-") { return matching(["-C", "-h", "--help", "--version"], current) }
      return matching(allCommands.map { $0.name } + ["help"], current)
    }
    let name = words[at]
    if name == "help" { return at + 1 == index ? matching(allCommands.map { $0.name }, current) : [] }
    guard let command = allCommands.first(where: { $0.name == name }) else { return [] }
    if current.hasPrefix("-") { return matching(options(of: command), current) }
    let typed = Array(words[(at + 1)..<index].filter { !$0.hasPrefix("-") })
    var offered: [String] = []
    for line in positionalLines(of: command) where line.count > typed.count {
      if agrees(line, typed) { offered += slotCandidates(line, typed: typed, directory: directory) }
    }
    var seen = Set<String>()
    return matching(offered.filter { seen.insert($0).inserted }, current)
  }

  /// Whether the literal words of a usage line (`add`, `rm|list`) agree
  /// with the positional words typed so far.
  private static func agrees(_ line: [String], _ typed: [String]) -> Bool {
    for (position, word) in typed.enumerated() {
      let slot = line[position]
      guard slot.first?.isLowercase == true else { continue }
      if !slot.split(separator: "|").map(String.init).contains(word) { return false }
    }
    return true
  }

  /// What goes in a usage line's next slot: its literal words, the
  /// store's tables for `TABLE`, a table's keys for `PK`.
  private static func slotCandidates(_ line: [String], typed: [String], directory: String) -> [String] {
    let slot = line[typed.count]
    if slot.first?.isLowercase == true { return slot.split(separator: "|").map(String.init) }
    if slot == "TABLE" || slot == "OLD" { return tableNames(in: directory) }
    if slot == "PK", let tableSlot = line.firstIndex(of: "TABLE"), tableSlot < typed.count {
      return keys(of: typed[tableSlot], in: directory)
    }
    return []
  }

  /// The options a command's usage and help name (`--where`, `-m`).
  static func options(of command: any Command.Type) -> [String] {
    let text = command.usage + "\n" + command.details
    var found: [String] = []
    var seen = Set<String>()
    let pattern = try! NSRegularExpression(pattern: #"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])"#)
    let range = NSRange(text.startIndex..., in: text)
    for match in pattern.matches(in: text, range: range) {
      let option = String(text[Range(match.range(at: 1), in: text)!])
      if seen.insert(option).inserted { found.append(option) }
    }
    return found + ["--help"].filter { !seen.contains($0) }
  }

  /// Each usage line's positional words after the command's name: literal
  /// words (`add`, `subscribe|unsubscribe`) and placeholders (`TABLE`).
  static func positionalLines(of command: any Command.Type) -> [[String]] {
    command.usage.split(separator: "\n").compactMap { line in
      let words = line.split(separator: " ").map(String.init)
      guard let start = words.firstIndex(of: command.name) else { return nil }
      var slots: [String] = []
      for word in words[(start + 1)...] {
        // Options and what follows the first optional part are not slots.
        if word.hasPrefix("[") || word.hasPrefix("-") { break }
        slots.append(word.trimmingCharacters(in: CharacterSet(charactersIn: "….")))
      }
      return slots
    }
  }

  private static func matching(_ words: [String], _ prefix: String) -> [String] {
    words.filter { $0.hasPrefix(prefix) }
  }

  private static func tableNames(in directory: String) -> [String] {
    guard let store = try? Store(atPath: directory) else { return [] }
    return store.heldTables.map(\.name)
  }

  private static func keys(of table: String, in directory: String) -> [String] {
    guard let store = try? Store(atPath: directory) else { return [] }
    return ((try? store.collection(table).allPKs()) ?? []).sorted()
  }
}
