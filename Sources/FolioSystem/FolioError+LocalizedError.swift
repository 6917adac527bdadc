import Foundation

/// So that `error.localizedDescription` reads the message, not "The
/// operation could not be completed. (FolioError error 1.)".
extension FolioError: LocalizedError {
  /// The message and where, as ``description`` gives them.
  public var errorDescription: String? { description }
  /// What went wrong, without the position.
  public var failureReason: String? { message }
  /// The remedy, in the library's terms.
  public var recoverySuggestion: String? { remedy?.advice }
}
