/// What a publisher saw change in the table folders since a token: the
/// answer `folio status` and `folio commit` ask for instead of taking a
/// stat of every document file, as git's fsmonitor hook answers
/// `git status`.
package struct ChangedFiles: Sendable, Equatable {
  /// Names the moment of this answer; the next question passes it back.
  package var token: String
  /// For each table the publisher vouches for, the names of the files in
  /// its folder that were created, written, moved or removed since the
  /// question's token. A table not here must be checked whole.
  package var changed: [String: [String]]

  package init(token: String, changed: [String: [String]]) {
    self.token = token
    self.changed = changed
  }
}
