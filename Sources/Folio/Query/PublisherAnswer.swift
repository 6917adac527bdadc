/// A publisher's answer about one table (rule 2 in `TableIndex+Watch.swift`):
/// base `generation` plus the first `logSize` bytes of the log describe
/// every document of the folder with this device and inode, for an index
/// built for `signature`.
struct PublisherAnswer: Equatable {
  var generation: UInt64
  var logSize: Int
  var signature: String
  var device: UInt64
  var inode: UInt64
}
