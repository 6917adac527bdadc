import Testing

/// Runs the body of a randomized test so that an error thrown out of it is
/// recorded with the seed, to replay with `FOLIO_TEST_SEED`: a failed
/// expectation prints the seed in its comment, a thrown error would not.
func reportingSeed(
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
