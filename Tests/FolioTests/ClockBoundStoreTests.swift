import Folio
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioCore

/// The local half of the clock bound: the stamp format never overflows,
/// and a clock file or log tail past the bound (written by an older Folio,
/// or by hand) is not carried forward into new stamps.
struct ClockBoundStoreTests {
  @Test func theTextFormHoldsOnlyItsOwnDigits() {
    #expect(HLC("9999999999999-9999-r") == HLC(wall: HLC.maximumWall, counter: 9999, replica: "r"))
    for text in [
      "10000000000000-0000-r", "+999999999999-0000-r", "-999999999999-0000-r", "0000000000001-+999-r",
    ] {
      #expect(HLC(text) == nil, "\(text)")
    }
  }

  @Test func nextNeverLeavesTheFormat() {
    let last = HLC(wall: HLC.maximumWall, counter: HLC.maximumCounter, replica: "r")
    let next = HLC.next(after: last, now: 1, replica: "r")
    #expect(HLC(next.description) == next, "\(next)")
  }

  @Test(arguments: ["9999999999999-9999-far", "9000000000000-0000-far"])
  func aPoisonedClockFileIsIgnored(_ stamp: String) throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try scratch.write(".git/folio/clock", stamp + "\n")
    try store.apply(table: "todos", pk: "a", op: .insert, columns: ["n": 1])
    try store.apply(table: "todos", pk: "a", op: .update, columns: ["n": 2])
    let stamps = try store.ops().map(\.hlc)
    let now = SystemClock.nowMilliseconds()
    #expect(stamps.count == 2)
    #expect(stamps.allSatisfy { abs($0.wall - now) < 60_000 }, "\(stamps)")
    #expect(stamps[0] < stamps[1])
  }

  @Test func aLogTailPastTheBoundIsNotFollowed() throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try store.apply(table: "todos", pk: "a", op: .insert, columns: ["n": 1])
    // An op an older Folio stamped after following a remote clock.
    let far = Op(
      hlc: HLC(wall: 9_000_000_000_000, counter: 0, replica: store.replicaID), table: "todos", pk: "a",
      mutation: Mutation(kind: .update))
    let log = scratch.path + "/" + store.relative(store.opLogPath)
    let handle = try #require(FileHandle(forWritingAtPath: log))
    handle.seekToEndOfFile()
    handle.write(Data((far.json.compactString + "\n").utf8))
    try handle.close()
    store.clock.reset()
    try store.apply(table: "todos", pk: "a", op: .update, columns: ["n": 3])
    let last = try #require(try store.ops().first { $0.mutation.assignments.first?.value == 3 })
    #expect(abs(last.hlc.wall - SystemClock.nowMilliseconds()) < 60_000, "\(last.hlc)")
  }

  @Test func maxClockSkewIsReadAndWrittenBack() throws {
    let config = try Config(yaml: "version: 1\nsync:\n  max-clock-skew: 2h\n")
    #expect(config.sync.maxClockSkew == .seconds(7200))
    #expect(config.yamlText().contains("max-clock-skew: 2h"))
    #expect(try Config(yaml: config.yamlText()) == config)
    #expect(throws: FolioError.self) { try Config(yaml: "version: 1\nsync:\n  max-clock-skew: 99999999h\n") }
  }
}
