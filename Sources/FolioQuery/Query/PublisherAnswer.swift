/// A publisher's answer about one table (rule 2 in `TableIndex+Watch.swift`):
/// base `generation` plus the first `logSize` bytes of the log describe
/// every document of the folder with this device and inode, for an index
/// built for `signature`.
package struct PublisherAnswer: Equatable {
  package var generation: UInt64
  package var logSize: Int
  package var signature: String
  package var device: UInt64
  package var inode: UInt64

  package init(generation: UInt64, logSize: Int, signature: String, device: UInt64, inode: UInt64) {
    self.generation = generation
    self.logSize = logSize
    self.signature = signature
    self.device = device
    self.inode = inode
  }
}
