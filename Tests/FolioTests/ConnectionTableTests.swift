import Testing

@testable import FolioServe

/// The decisions behind `folio serve`'s connection limits, without sockets:
/// who is let in, who is evicted to make room, and who is refused.
struct ConnectionTableTests {
  let a: [UInt8] = [127, 0, 0, 1]
  let b: [UInt8] = [10, 0, 0, 2]

  @Test func pastTheAddressLimitTheOldestAwaitingARequestFromThatAddressIsEvicted() {
    var table = ConnectionTable(capacity: 100, perAddress: 3)
    #expect(table.admit(10, from: a, now: 1) == .admit(evicting: nil))
    #expect(table.admit(11, from: a, now: 2) == .admit(evicting: nil))
    #expect(table.admit(12, from: a, now: 3) == .admit(evicting: nil))
    table.set(10, to: .busy, now: 4)
    // 10 is busy, so 11 has waited longest.
    #expect(table.admit(13, from: a, now: 5) == .admit(evicting: 11))
    // Another address is not touched.
    #expect(table.admit(20, from: b, now: 6) == .admit(evicting: nil))
    #expect(table.admit(14, from: a, now: 7) == .admit(evicting: 12))
  }

  @Test func withNothingToEvictTheNewConnectionIsRefused() {
    var table = ConnectionTable(capacity: 100, perAddress: 2)
    _ = table.admit(10, from: a, now: 1)
    _ = table.admit(11, from: a, now: 2)
    table.set(10, to: .busy, now: 3)
    table.set(11, to: .busy, now: 3)
    guard case .refuse(let reason) = table.admit(12, from: a, now: 4) else {
      Issue.record("not refused")
      return
    }
    #expect(reason.contains("too many connections from this address"))
    #expect(table.entry(12) == nil)
  }

  @Test func streamsDoNotCountAgainstTheAddressLimitButDoAgainstTheTable() {
    var table = ConnectionTable(capacity: 4, perAddress: 1)
    for socket in Int32(10)..<13 {
      #expect(table.admit(socket, from: a, now: Double(socket)) == .admit(evicting: nil))
      table.set(socket, to: .stream, now: Double(socket))
    }
    #expect(table.admit(13, from: a, now: 20) == .admit(evicting: nil))
    // The table is full: the only connection awaiting a request goes, from
    // whichever address.
    #expect(table.admit(30, from: b, now: 21) == .admit(evicting: 13))
    table.set(30, to: .busy, now: 22)
    table.remove(13)
    guard case .refuse(let reason) = table.admit(31, from: [10, 0, 0, 3], now: 23) else {
      Issue.record("not refused")
      return
    }
    #expect(reason.contains("limit of 4 connections"))
  }

  @Test func anIdleKeepAliveIsEvictedByHowLongItHasBeenIdle() {
    var table = ConnectionTable(capacity: 100, perAddress: 2)
    _ = table.admit(10, from: a, now: 1)
    _ = table.admit(11, from: a, now: 2)
    table.set(10, to: .busy, now: 3)
    table.set(10, to: .awaitingRequest, now: 9)
    #expect(table.admit(12, from: a, now: 10) == .admit(evicting: 11))
  }

  @Test func evictedConnectionsStillClosingAreBounded() {
    var table = ConnectionTable(capacity: 2, perAddress: 10, closingAllowance: 1)
    _ = table.admit(10, from: a, now: 1)
    _ = table.admit(11, from: a, now: 2)
    #expect(table.admit(12, from: a, now: 3) == .admit(evicting: 10))
    // 10 has not closed yet: one more eviction would pass the allowance.
    guard case .refuse = table.admit(13, from: a, now: 4) else {
      Issue.record("not refused")
      return
    }
    table.remove(10)
    #expect(table.admit(13, from: a, now: 5) == .admit(evicting: 11))
  }

  @Test func aReusedSocketNumberReplacesAStaleEntry() {
    var table = ConnectionTable(capacity: 1, perAddress: 1)
    _ = table.admit(10, from: a, now: 1)
    #expect(table.admit(10, from: a, now: 2) == .admit(evicting: nil))
    #expect(table.entries.count == 1)
  }
}
