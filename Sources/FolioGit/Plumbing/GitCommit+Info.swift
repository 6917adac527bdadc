internal import Clibgit2
import Foundation

extension GitCommit {
  /// The commit's id, author, date and summary.
  var info: CommitInfo {
    let author = git_commit_author(handle)
    let name = author?.pointee.name.map { String(cString: $0) } ?? ""
    let email = author?.pointee.email.map { String(cString: $0) } ?? ""
    let seconds = author.map { $0.pointee.when.time } ?? git_commit_time(handle)
    let summary = message.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first
    return CommitInfo(
      id: id.description, author: name, email: email, date: Date(timeIntervalSince1970: Double(seconds)),
      summary: summary.map(String.init) ?? "")
  }
}
