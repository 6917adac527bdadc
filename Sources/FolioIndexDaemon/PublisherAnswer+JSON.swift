import FolioJSON
import FolioQuery

extension PublisherAnswer {
  /// The answer as a publisher sends it.
  var json: JSONValue {
    [
      "clean": true, "generation": .string(String(generation, radix: 16)), "log": .integer(Int64(logSize)),
      "signature": .string(signature),
      "folder": [.integer(Int64(bitPattern: device)), .integer(Int64(bitPattern: inode))],
    ]
  }

  /// An answer read from a publisher; nil for `{"clean": false}` or
  /// anything malformed.
  init?(json: JSONValue) {
    guard json["clean"] == .bool(true),
      let generation = json["generation"]?.stringValue.flatMap({ UInt64($0, radix: 16) }),
      let log = json["log"]?.numberText.flatMap({ Int($0) }),
      let signature = json["signature"]?.stringValue,
      let folder = json["folder"]?.arrayValue?.compactMap({ $0.numberText.flatMap { Int64($0) } }),
      folder.count == 2
    else { return nil }
    self.init(
      generation: generation, logSize: log, signature: signature, device: UInt64(bitPattern: folder[0]),
      inode: UInt64(bitPattern: folder[1]))
  }
}
