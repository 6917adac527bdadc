extension JSONValue {
  /// The value in Folio's canonical JSON form, as UTF-8 bytes: the form of
  /// document files, byte-equal for equal values on every replica.
  ///
  /// Object keys sorted by Unicode code point, a 2-space indent, one member
  /// or element per line, `": "` after keys, `[]` and `{}` when empty,
  /// numbers as their literal text, UTF-8 written as is with only `"`, `\`
  /// and U+0000–U+001F escaped, and a trailing newline.
  ///
  /// ```swift
  /// let doc: JSONValue = ["views": 1, "id": "3f2a", "tags": []]
  /// print(doc.canonicalString, terminator: "")
  /// // {
  /// //   "id": "3f2a",
  /// //   "tags": [],
  /// //   "views": 1
  /// // }
  /// ```
  public func canonicalBytes() -> [UInt8] {
    var writer = JSONWriter()
    writer.writeCanonical(self)
    return writer.bytes
  }

  /// The value in Folio's canonical JSON form; see ``canonicalBytes()``.
  public var canonicalString: String {
    String(decoding: canonicalBytes(), as: UTF8.self)
  }

  /// The value as compact JSON, as UTF-8 bytes: keys sorted as in the
  /// canonical form, no whitespace, no trailing newline. Used for NDJSON
  /// lines and command output.
  ///
  /// ```swift
  /// let op: JSONValue = ["pk": "3f2a", "op": "update"]
  /// op.compactString  // {"op":"update","pk":"3f2a"}
  /// ```
  public func compactBytes() -> [UInt8] {
    var writer = JSONWriter(reservingCapacity: 256)
    writer.writeCompact(self)
    return writer.bytes
  }

  /// The value as compact JSON; see ``compactBytes()``.
  public var compactString: String {
    String(decoding: compactBytes(), as: UTF8.self)
  }
}
