import Glibc

/// A folder's descriptor, closed when the last holder lets it go: what a
/// ``WorkTree`` keeps open, shared with the ``DeferredUnlinks`` that still
/// have files to unlink in it after the work tree has moved on.
package final class OpenFolder: Sendable {
  /// The descriptor, open for the lifetime of this object.
  package let descriptor: Int32

  /// Takes ownership of `descriptor`.
  package init(owning descriptor: Int32) {
    precondition(descriptor >= 0, "OpenFolder needs an open descriptor")
    self.descriptor = descriptor
  }

  deinit {
    close(descriptor)
  }
}
