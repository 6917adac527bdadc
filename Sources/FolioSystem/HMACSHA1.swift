/// HMAC-SHA1 (RFC 2104), for the hashed host names in `known_hosts`
/// (`|1|salt|hash`, where hash is HMAC-SHA1 of the host keyed by the salt).
/// OpenSSH fixes the algorithm; nothing here is used to protect a secret.
package enum HMACSHA1 {
  /// The 20-byte MAC of `message` under `key`.
  package static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
    var block = key
    if block.count > 64 {
      var hash = SHA1()
      hash.update(block)
      block = hash.finish()
    }
    block += [UInt8](repeating: 0, count: 64 - block.count)
    var inner = SHA1()
    inner.update(block.map { $0 ^ 0x36 })
    inner.update(message)
    var outer = SHA1()
    outer.update(block.map { $0 ^ 0x5c })
    outer.update(inner.finish())
    return outer.finish()
  }
}
