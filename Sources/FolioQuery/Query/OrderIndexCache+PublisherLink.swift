import Synchronization

extension OrderIndexCache {
  /// The registered link; nil until the composition root registers one.
  private static let link = Mutex<(any IndexPublisherLink)?>(nil)

  /// Registers how queries reach publishers (the composition root calls it).
  package static func register(_ link: any IndexPublisherLink) {
    self.link.withLock { $0 = link }
  }

  /// The registered link, if any.
  package static var publisherLink: (any IndexPublisherLink)? { link.withLock { $0 } }
}
