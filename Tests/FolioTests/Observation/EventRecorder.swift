import Folio
import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import FolioTestSupport
import Foundation

/// Collects what a live query delivers, and lets a test wait for it.
final class EventRecorder<T: Sendable>: @unchecked Sendable {
  // @unchecked: all state is guarded by `condition`.
  private let condition = NSCondition()
  private var items: [T] = []

  func append(_ item: T) {
    condition.lock()
    items.append(item)
    condition.broadcast()
    condition.unlock()
  }

  var all: [T] {
    condition.lock()
    defer { condition.unlock() }
    return items
  }

  /// Waits until at least `count` items have arrived, or `timeout` passes.
  @discardableResult
  func wait(for count: Int, timeout: Double = stateTimeout) -> [T] {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while items.count < count {
      if !condition.wait(until: deadline) { break }
    }
    return items
  }

  /// Waits until `predicate` holds for the items, or `timeout` passes.
  @discardableResult
  func wait(timeout: Double = stateTimeout, until predicate: ([T]) -> Bool) -> [T] {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while !predicate(items) {
      if !condition.wait(until: deadline) { break }
    }
    return items
  }
}

/// A flag or counter shared with a handler.
final class Shared<T: Sendable>: @unchecked Sendable {
  // @unchecked: all state is guarded by `lock`.
  private let lock = NSLock()
  private var stored: T
  init(_ value: T) { stored = value }
  var value: T {
    lock.lock()
    defer { lock.unlock() }
    return stored
  }
  func update<R>(_ body: (inout T) -> R) -> R {
    lock.lock()
    defer { lock.unlock() }
    return body(&stored)
  }
}
