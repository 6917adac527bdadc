import Foundation
import Testing

/// The seed of a randomized test: `FOLIO_TEST_SEED` if set, to replay a
/// failure, else a fresh one, which the test prints in every expectation.
public func testSeed() -> UInt64 {
  ProcessInfo.processInfo.environment["FOLIO_TEST_SEED"].flatMap(UInt64.init)
    ?? UInt64.random(in: .min ... .max)
}

/// Runs the body of a randomized test so that an error thrown out of it is
/// recorded with the seed, to replay with `FOLIO_TEST_SEED`: a failed
/// expectation prints the seed in its comment, a thrown error would not.
public func reportingSeed(
  _ seed: UInt64, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) throws {
  do {
    try body()
  } catch let failure as ExpectationFailedError {
    throw failure  // a #require, whose comment has the seed
  } catch {
    Issue.record(error, "seed \(seed) (replay with FOLIO_TEST_SEED=\(seed))", sourceLocation: sourceLocation)
  }
}

/// A small seeded generator, so a failing run can be replayed with FOLIO_TEST_SEED.
public struct SplitMix: RandomNumberGenerator {
  public var state: UInt64
  public init(seed: UInt64) { state = seed }
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E4B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
