import FolioJSON
import Foundation
import Glibc

/// A commit as history commands show it: its id, author and date.
public struct CommitInfo: Sendable, Hashable {
  /// The full commit id, 40 hex digits.
  public var id: String
  /// The author's name.
  public var author: String
  /// The author's email address.
  public var email: String
  /// When the author made it.
  public var date: Date
  /// The first line of its message.
  public var summary: String

  /// Creates a commit description.
  public init(id: String, author: String, email: String, date: Date, summary: String) {
    self.id = id
    self.author = author
    self.email = email
    self.date = date
    self.summary = summary
  }

  /// The commit's members for an NDJSON line: `commit`, `author`, `email`
  /// and `date` (``isoDate``).
  public var jsonMembers: [(String, JSONValue)] {
    [
      ("commit", .string(id)), ("author", .string(author)), ("email", .string(email)),
      ("date", .string(isoDate)),
    ]
  }

  /// The date in ISO 8601, UTC to the second (`2026-12-03T20:48:59Z`), as
  /// NDJSON output gives it.
  public var isoDate: String {
    var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
      + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
  }
}
