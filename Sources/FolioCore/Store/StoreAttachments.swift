import Synchronization

/// State a later layer keeps per store (its live queries, its
/// subscriptions), made on first use and owned by the store, so the store
/// holds it without naming its type.
package final class StoreAttachments: Sendable {
  private let values = Mutex<[ObjectIdentifier: any Sendable]>([:])

  /// The attachment of type `T`, made by `make` the first time.
  package func value<T: AnyObject & Sendable>(_ type: T.Type, _ make: () -> T) -> T {
    values.withLock { values in
      if let value = values[ObjectIdentifier(type)] as? T { return value }
      let value = make()
      values[ObjectIdentifier(type)] = value
      return value
    }
  }
}
