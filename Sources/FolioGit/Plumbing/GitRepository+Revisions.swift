internal import Clibgit2
import FolioSystem
import Foundation

extension GitRepository {
  /// The commit `revision` names: anything `git rev-parse` takes (a full or
  /// short id, a branch, a tag, `HEAD~3`, `main^2`), or a date (`2026-11-30`,
  /// `'2 days ago'`, `yesterday`), meaning the last commit on the current
  /// branch's first-parent line made before it.
  /// - Throws: `NOT_FOUND` naming the revision and what it accepts.
  package func resolveCommit(_ revision: String) throws -> GitOID {
    if let id = try parsedRevision(revision) { return id }
    if Self.looksLikeDate(revision) {
      let result = try SystemGit(gitDirectory: gitDirectory).run([
        "rev-list", "-1", "--first-parent", "--before=" + revision, "HEAD", "--",
      ])
      let text = String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(
        in: .whitespacesAndNewlines)
      if result.status == 0, let id = GitOID(hex: text) { return id }
      if result.status == 0 {
        throw FolioError(
          .notFound,
          "no commit on this branch is older than '\(revision)'; give a later date, or a commit from 'git log'"
        )
      }
    }
    throw FolioError(
      .notFound,
      "'\(revision)' names no commit here: give a commit id, a branch or tag, HEAD~N, or a date such as "
        + "2026-11-30 or '2 days ago'")
  }

  /// The commit git's revision syntax gives for `revision`, or nil when it
  /// names none.
  private func parsedRevision(_ revision: String) throws -> GitOID? {
    // An option-like revision would be read by git as one; refuse it here.
    guard !revision.isEmpty, !revision.hasPrefix("-") else { return nil }
    var object: OpaquePointer?
    guard git_revparse_single(&object, handle, revision) == 0, let object else { return nil }
    defer { git_object_free(object) }
    var commit: OpaquePointer?
    guard git_object_peel(&commit, object, GIT_OBJECT_COMMIT) == 0, let commit else { return nil }
    defer { git_object_free(commit) }
    return GitOID(git_object_id(commit).pointee)
  }

  /// Whether `text` reads as a date to git's approximate date parser: it
  /// takes nearly anything, so only text with a digit or a date word goes
  /// to it.
  static func looksLikeDate(_ text: String) -> Bool {
    guard !text.hasPrefix("-") else { return false }
    if text.contains(where: \.isNumber) { return true }
    let words = ["yesterday", "today", "now", "noon", "midnight", "ago", "last"]
    let lower = text.lowercased()
    return words.contains { lower.contains($0) }
  }
}
