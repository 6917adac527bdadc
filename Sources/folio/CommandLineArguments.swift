import Folio

/// A command line split into options, flags and positional arguments, by a
/// command's declared option names. Accepts `--name value`, `--name=value`,
/// `-x value`, and `--` to end options.
///
/// An option or flag given twice is a usage error unless it is declared
/// `repeatable` (read those with ``allValues(_:)``): a silent "last one
/// wins" would run a query other than the one typed (issue 13).
struct CommandLineArguments {
  private(set) var positionals: [String] = []
  private var values: [String: [String]] = [:]
  private var flags: Set<String> = []

  /// - Parameters:
  ///   - options: names that take a value, such as `["--op", "-m"]`.
  ///   - flags: names that take none, such as `["--json"]`.
  ///   - repeatable: options that may be given more than once, such as
  ///     `["--table"]`.
  init(
    _ arguments: [String], options: Set<String> = [], flags: Set<String> = [], repeatable: Set<String> = []
  ) throws {
    var index = 0
    var onlyPositionals = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
        positionals.append(argument)
        continue
      }
      if argument == "--" {
        onlyPositionals = true
        continue
      }
      var name = argument
      var inline: String?
      if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
        name = String(argument[..<equals])
        inline = String(argument[argument.index(after: equals)...])
      }
      if options.contains(name) {
        if values[name] != nil && !repeatable.contains(name) {
          throw UsageError("option '\(name)' is given more than once; give it once")
        }
        if let inline {
          values[name, default: []].append(inline)
        } else {
          guard index < arguments.count else { throw UsageError("option '\(name)' needs a value") }
          values[name, default: []].append(arguments[index])
          index += 1
        }
      } else if flags.contains(name), inline == nil {
        if !self.flags.insert(name).inserted {
          throw UsageError("option '\(name)' is given more than once; give it once")
        }
      } else if Double(argument) != nil {
        positionals.append(argument)  // a negative number, not an option
      } else if !argument.hasPrefix("--") {
        // A Firebase push id (`-Nx3…`), other pks, and flags of other
        // tools (`-a`) start with `-`.
        throw UsageError(
          "unknown option '\(name)'; if it is a pk or another value, put -- before it: folio … -- \(argument)"
        )
      } else if let near = NearestName.nearest(to: name, among: options.union(flags)) {
        throw UsageError("unknown option '\(name)'; did you mean '\(near)'?")
      } else {
        throw UsageError("unknown option '\(name)'")
      }
    }
  }

  /// The last value given for `name`.
  func value(_ name: String) -> String? { values[name]?.last }

  /// Every value given for a repeatable option, in order.
  func allValues(_ name: String) -> [String] { values[name] ?? [] }

  /// Whether the flag was given.
  func flag(_ name: String) -> Bool { flags.contains(name) }

  /// The value of `--format`: one of `allowed`, the first when not given.
  func format(_ allowed: [String]) throws -> String {
    let format = value("--format") ?? allowed[0]
    guard allowed.contains(format) else {
      let choices = allowed.dropLast().joined(separator: ", ") + " or " + allowed.last!
      throw UsageError("unknown format '\(format)'; use \(choices)")
    }
    return format
  }

  /// Checks the number of positional arguments.
  func expectPositionals(_ range: ClosedRange<Int>) throws {
    if positionals.count < range.lowerBound {
      throw UsageError("missing argument")
    }
    if positionals.count > range.upperBound {
      throw UsageError("unexpected argument '\(positionals[range.upperBound])'")
    }
  }
}

/// A command line that does not parse: exit 64 with the command's usage.
struct UsageError: Error {
  var message: String
  init(_ message: String) { self.message = message }
}

extension CommandLineArguments {
  /// The value of `--layout` (flat, hashed or nested); `TableLayout.forNewTables`
  /// when it is not given.
  func layout() throws -> TableLayout {
    guard let text = value("--layout") else { return .forNewTables }
    guard let layout = TableLayout(rawValue: text) else {
      throw UsageError("--layout takes flat, hashed or nested, not '\(text)'")
    }
    return layout
  }
}
