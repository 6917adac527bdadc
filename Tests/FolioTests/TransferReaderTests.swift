import Folio
import FolioJSON
import FolioSystem
import FolioTestSupport
import Foundation
import Testing

@testable import FolioCore
@testable import FolioGit
@testable import FolioTransfer

/// Reads every event from a reader: rows as compact JSON, bad rows as their
/// error text.
private func drain(_ reader: any RowReader) throws -> (rows: [String], lines: [Int], bad: [String]) {
  var rows: [String] = []
  var lines: [Int] = []
  var bad: [String] = []
  while let event = try reader.next() {
    switch event {
    case .row(let value, let line):
      rows.append(value.compactString)
      lines.append(line)
    case .keyedRow(let key, let value, let line):
      rows.append(key + "=" + value.compactString)
      lines.append(line)
    case .bad(let error): bad.append(error.description)
    }
  }
  return (rows, lines, bad)
}

private func stream(_ text: String, name: String = "in") -> ByteStream {
  ByteStream(bytes: Array(text.utf8), name: name)
}

/// A stream over a temporary file read `chunk` bytes at a time, so records
/// straddle buffer refills.
private func chunked(_ text: String, chunk: Int, scratch: Scratch, name: String = "in") throws -> ByteStream {
  try scratch.write(name, text)
  return try ByteStream(path: scratch.path + "/" + name, displayName: name, chunkSize: chunk)
}

struct CSVReaderTests {
  @Test func quotesNewlinesBOMAndCRLF() throws {
    let text = "\u{FEFF}id,name,note\r\n1,\"Smith, J\",\"said \"\"hi\"\"\r\nthen left\"\r\n2,plain,\r\n"
    for chunk in [1, 2, 3, 7, 1 << 20] {
      let scratch = Scratch()
      defer { scratch.remove() }
      let reader = CSVReader(
        stream: try chunked(text, chunk: chunk, scratch: scratch), separator: UInt8(ascii: ","),
        detectTypes: true)
      let result = try drain(reader)
      #expect(
        result.rows == [
          #"{"id":1,"name":"Smith, J","note":"said \"hi\"\r\nthen left"}"#,
          #"{"id":2,"name":"plain","note":null}"#,
        ], "chunk \(chunk)")
      #expect(result.lines == [2, 4])
    }
  }

  @Test func typeInferenceKeepsIntegerTextExactly() throws {
    let text = """
      a,b,c,d,e,f,g,h
      12345678901234567890123,-0.50,1e3,true,false,,007,"42"

      """
    let reader = CSVReader(stream: stream(text), separator: UInt8(ascii: ","), detectTypes: true)
    let result = try drain(reader)
    #expect(
      result.rows == [
        #"{"a":12345678901234567890123,"b":-0.50,"c":1e3,"d":true,"e":false,"f":null,"g":"007","h":"42"}"#
      ])
    let plain = try drain(CSVReader(stream: stream(text), separator: UInt8(ascii: ","), detectTypes: false))
    #expect(
      plain.rows == [
        #"{"a":"12345678901234567890123","b":"-0.50","c":"1e3","d":"true","e":"false","f":"","g":"007","h":"42"}"#
      ])
  }

  @Test func raggedRowIsBadWithItsLine() throws {
    let text = "a,b\n1,\"x\ny\"\n1,2,3\n4,5\n"
    let result = try drain(
      CSVReader(stream: stream(text, name: "r.csv"), separator: UInt8(ascii: ","), detectTypes: true))
    #expect(result.rows.count == 2)
    #expect(result.bad == ["r.csv:4:1: error: row has 3 fields but the header has 2"])
  }

  @Test func unclosedQuoteAndBadHeaderThrow() throws {
    #expect(throws: FolioError.self) {
      _ = try drain(CSVReader(stream: stream("a\n\"open\n"), separator: UInt8(ascii: ","), detectTypes: true))
    }
    #expect(throws: FolioError.self) {
      _ = try drain(CSVReader(stream: stream("a,a\n1,2\n"), separator: UInt8(ascii: ","), detectTypes: true))
    }
    #expect(throws: FolioError.self) {
      _ = try drain(CSVReader(stream: stream(""), separator: UInt8(ascii: ","), detectTypes: true))
    }
  }

  @Test func tsv() throws {
    let result = try drain(CSVReader(stream: stream("a\tb\nx,y\t2\n"), separator: 0x09, detectTypes: true))
    #expect(result.rows == [#"{"a":"x,y","b":2}"#])
  }

  @Test func nullValuesReadAsNullOnlyUnquoted() throws {
    let text = "a,b,c,d\nNA,\"NA\",\\N,\n-,x,,\"\"\n"
    let detected = try drain(
      CSVReader(
        stream: stream(text), separator: UInt8(ascii: ","), detectTypes: true, nullValues: ["NA", "\\N", "-"])
    )
    #expect(
      detected.rows == [#"{"a":null,"b":"NA","c":null,"d":null}"#, #"{"a":null,"b":"x","c":null,"d":""}"#])
    // Without type detection an empty field is a string, unless "" is listed.
    let plain = try drain(
      CSVReader(stream: stream(text), separator: UInt8(ascii: ","), detectTypes: false, nullValues: ["NA"]))
    #expect(plain.rows == [#"{"a":null,"b":"NA","c":"\\N","d":""}"#, #"{"a":"-","b":"x","c":"","d":""}"#])
    let empty = try drain(
      CSVReader(stream: stream(text), separator: UInt8(ascii: ","), detectTypes: false, nullValues: [""]))
    #expect(empty.rows[1] == #"{"a":"-","b":"x","c":null,"d":""}"#)
  }

  /// Texts whose JSON reading would export differently stay strings: a
  /// number keeps its exact text, and what is not a JSON number is a string.
  @Test(arguments: ["007", "+1", ".5", "1.", "0x1F", "1,5", "NaN", "Infinity", "TRUE", "1_000"])
  func textThatIsNotAJSONNumberStaysAString(text: String) {
    #expect(CSVReader.inferredValue(text) == .string(text))
  }

  @Test(arguments: ["0", "-0", "1.50", "1e5", "1E+05", "-0.0", "123456789012345678901234567890"])
  func numbersKeepTheirText(text: String) {
    #expect(CSVReader.inferredValue(text) == .number(text))
    #expect(
      String(decoding: CSVExportWriter.field(.number(text), separator: 0x2C, header: false), as: UTF8.self)
        == text)
  }

  @Test func writerWritesNullAsTheFirstNullValueAndQuotesTheOthers() {
    let nulls = Set(["NA", "-"].map { Array($0.utf8) })
    func field(_ value: JSONValue?) -> String {
      String(
        decoding: CSVExportWriter.field(
          value, separator: 0x2C, header: false, null: Array("NA".utf8), nullValues: nulls), as: UTF8.self)
    }
    #expect(field(.null) == "NA")
    #expect(field(nil) == "NA")
    #expect(field(.string("NA")) == "\"NA\"")
    #expect(field(.string("-")) == "\"-\"")
    #expect(field(.string("NAB")) == "NAB")
  }

  @Test func writerQuotesWhatWouldReadBackAsAnotherType() throws {
    let cases: [(JSONValue?, String)] = [
      (.string("42"), "\"42\""), (.string(""), "\"\""), (.string("true"), "\"true\""),
      (.string("a,b"), "\"a,b\""),
      (.string("plain"), "plain"), (.number("1.50"), "1.50"), (nil, ""), (.null, ""),
      (["x": 1], #""{""x"":1}""#),
    ]
    for (value, expected) in cases {
      let field = CSVExportWriter.field(value, separator: UInt8(ascii: ","), header: false)
      #expect(String(decoding: field, as: UTF8.self) == expected)
    }
  }
}

struct JSONStreamReaderTests {
  static let array = """
    [
      {"id": "a", "s": "has ] and , and \\" inside"},
      {"id": "b", "nested": {"list": [1, [2, {"x": "}"}]]}},
      {"id": "c", "bad": tru},
      {"id": "d"}
    ]
    """

  @Test(arguments: [1, 2, 5, 16, 1 << 20])
  func arrayElementByElement(chunk: Int) throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let reader = JSONArrayReader(
      stream: try chunked(Self.array, chunk: chunk, scratch: scratch, name: "a.json"))
    let result = try drain(reader)
    #expect(result.rows.count == 3)
    #expect(result.rows[1] == #"{"id":"b","nested":{"list":[1,[2,{"x":"}"}]]}}"#)
    #expect(result.lines == [2, 3, 5])
    #expect(result.bad.count == 1)
    #expect(result.bad.first?.hasPrefix("a.json:4:") == true)
  }

  @Test func brokenArrayStructureThrows() throws {
    for text in ["[{\"a\":1},", "{\"a\":1", "[1] x", "[1 2", "", "{\"a\" {}}", "{a: {}}", "{\"a\": {}} x"] {
      #expect(throws: FolioError.self, "\(text)") { _ = try drain(JSONArrayReader(stream: stream(text))) }
    }
    #expect(try drain(JSONArrayReader(stream: stream(" [ ] "))).rows.isEmpty)
    // Two values with no comma between them read as one malformed element.
    #expect(try drain(JSONArrayReader(stream: stream("[{\"a\":1} {\"b\":2}]"))).bad.count == 1)
  }

  static let keyed = """
    {
      "a\\u00e9": {"s": "has } and , and \\" inside"},
      "b": {"nested": {"list": [1, [2, {"x": "}"}]]}},
      "c": 3,
      "d": {"bad": tru},
      "é,\\"e": {}
    }
    """

  /// A JSON object keyed by pk reads member by member however the buffer
  /// is cut, with each key as it decodes and each bad member at its place.
  @Test(arguments: [1, 2, 5, 16, 1 << 20])
  func keyedObjectMemberByMember(chunk: Int) throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let reader = JSONArrayReader(
      stream: try chunked(Self.keyed, chunk: chunk, scratch: scratch, name: "k.json"))
    let result = try drain(reader)
    #expect(
      result.rows == [
        #"aé={"s":"has } and , and \" inside"}"#, #"b={"nested":{"list":[1,[2,{"x":"}"}]]}}"#, #"é,"e={}"#,
      ])
    #expect(result.lines == [2, 3, 6])
    #expect(result.bad.count == 2)
    #expect(
      result.bad.first
        == "k.json:4:8: error: the value of member 'c' must be an object (one document), not a number")
    #expect(result.bad.last?.hasPrefix("k.json:5:") == true)
  }

  @Test(arguments: [
    ("{\"a\" {}}", "k.json:1:6: error: expected ':' after the key 'a'"),
    ("{\n  7: {}}", "k.json:2:3: error: expected a string key (a document's pk) in the JSON object"),
    (
      "{\"a\": {}, \"b\": {}",
      "k.json:1:16: error: unexpected end of file inside an object member; the object is not closed"
    ),
    (
      "{\"a\": {}",
      "k.json:1:7: error: unexpected end of file inside an object member; the object is not closed"
    ),
    ("{\"a\": {}}}", "k.json:1:10: error: unexpected data after the JSON object"),
    ("{\"a", "k.json:1:2: error: unexpected end of file inside a member's key; the string is not closed"),
  ])
  func brokenKeyedObjectStructureIsAnErrorAtItsPlace(text: String, message: String) throws {
    let error = try #require(throws: FolioError.self) {
      _ = try drain(JSONArrayReader(stream: stream(text, name: "k.json")))
    }
    #expect(error.description == message)
    // Two members with no comma between them read as one malformed value,
    // a bad row, as two array elements do.
    #expect(try drain(JSONArrayReader(stream: stream("{\"a\": {} \"b\": {}}"))).bad.count == 1)
  }

  /// An object keyed by pk is streamed as an array is: the read buffer
  /// stays within two chunks however big the object.
  @Test func keyedObjectKeepsTheBufferSmall() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let path = scratch.path + "/big.json"
    _ = FileManager.default.createFile(atPath: path, contents: Data("{\n".utf8))
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    handle.seekToEndOfFile()
    let payload = String(repeating: "x", count: 200)
    let members = 16_000  // about 3.5 MB, several chunks
    var block = ""
    for i in 0..<members {
      block += (i == 0 ? "" : ",\n") + #""k\#(i)": {"n": \#(i), "payload": "\#(payload)"}"#
      if block.utf8.count > 1 << 20 {
        handle.write(Data(block.utf8))
        block = ""
      }
    }
    handle.write(Data((block + "\n}\n").utf8))
    try handle.close()
    let stream = try ByteStream(path: path)
    let reader = JSONArrayReader(stream: stream)
    var rows = 0
    while let event = try reader.next() {
      guard case .keyedRow(let key, _, _) = event else {
        Issue.record("not a keyed row: \(event)")
        break
      }
      #expect(key == "k\(rows)")
      rows += 1
      #expect(stream.buffer.count <= 2 * ByteStream.chunkSize)
    }
    #expect(rows == members)
  }

  @Test(arguments: [
    ("{\n}\n", TransferFormat.json), ("  {  \r\n\"a\": {}}", .json), ("{\"a\": {}}\n", .ndjson),
    ("[\n", .json), ("a,b\n", .csv),
  ])
  func sniffTellsAKeyedObjectFromNDJSON(head: String, format: TransferFormat) {
    #expect(TransferFormat.sniff(Array(head.utf8)) == format)
  }

  @Test(arguments: [1, 3, 1 << 20])
  func ndjsonLines(chunk: Int) throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let text = "\u{FEFF}{\"a\":1}\r\n\n  \n{\"a\":\"é\\n\"}\n{oops}\n[1]"
    let result = try drain(
      NDJSONReader(stream: try chunked(text, chunk: chunk, scratch: scratch, name: "x.ndjson")))
    #expect(result.rows == [#"{"a":1}"#, #"{"a":"é\n"}"#, "[1]"])
    #expect(result.lines == [1, 4, 6])
    #expect(result.bad.count == 1 && result.bad[0].hasPrefix("x.ndjson:5:2: error:"))
  }

  /// Memory stays flat: the read buffer never grows past a couple of chunks
  /// however long the stream. `FOLIO_BIG_STREAM=1` runs it on 1 GB.
  @Test func streamingKeepsTheBufferSmall() throws {
    let scratch = Scratch()
    defer { scratch.remove() }
    let big = ProcessInfo.processInfo.environment["FOLIO_BIG_STREAM"] == "1"
    let target = big ? 1 << 30 : 3 << 20
    let line = Array(#"{"id":"0000000000","payload":"\#(String(repeating: "x", count: 200))"}"#.utf8) + [0x0A]
    let path = scratch.path + "/big.ndjson"
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    var block: [UInt8] = []
    for _ in 0..<4096 { block += line }
    var written = 0
    while written < target {
      handle.write(Data(block))
      written += block.count
    }
    try handle.close()
    let expected = written / line.count
    for makeArray in [false, true] {
      var rows = 0
      if makeArray {
        // The same rows as one array: '[' + rows joined by ',' + ']'.
        let arrayPath = scratch.path + "/big.json"
        let source = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        _ = FileManager.default.createFile(atPath: arrayPath, contents: Data("[".utf8))
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: arrayPath))
        out.seekToEndOfFile()
        var first = true
        while let data = try source.read(upToCount: 1 << 20), !data.isEmpty {
          var bytes = Array(data)
          if first { first = false } else { out.write(Data(",".utf8)) }
          bytes.removeLast()  // the final newline of the block
          out.write(Data(bytes.map { $0 == 0x0A ? UInt8(ascii: ",") : $0 }))
        }
        out.write(Data("]".utf8))
        try out.close()
        let stream = try ByteStream(path: arrayPath)
        let reader = JSONArrayReader(stream: stream)
        while let event = try reader.next() {
          if case .row = event { rows += 1 }
          #expect(stream.buffer.count <= 2 * ByteStream.chunkSize)
        }
        unlink(arrayPath)
      } else {
        let stream = try ByteStream(path: path)
        let reader = NDJSONReader(stream: stream)
        while let event = try reader.next() {
          if case .row = event { rows += 1 }
          #expect(stream.buffer.count <= 2 * ByteStream.chunkSize)
        }
      }
      #expect(rows == expected)
    }
  }
}

struct TransferSupportTests {
  @Test func sha1KnownVectors() {
    func hex(_ text: String) -> String {
      var sha = SHA1()
      sha.update(Array(text.utf8))
      return sha.finish().map { String(format: "%02x", $0) }.joined()
    }
    #expect(hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    #expect(hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d")
    #expect(
      hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
        == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    #expect(hex(String(repeating: "a", count: 1000)) == "291e9a6c66994949b57ba5e650361e98fc36b1ba")
  }

  /// Fed in uneven pieces, the hash is the same as in one go.
  @Test func sha1Chunked() {
    let bytes = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 3) }
    var whole = SHA1()
    whole.update(bytes)
    var pieces = SHA1()
    var offset = 0
    var step = 1
    while offset < bytes.count {
      let n = min(step, bytes.count - offset)
      pieces.update(Array(bytes[offset..<(offset + n)]))
      offset += n
      step = step * 7 % 131 + 1
    }
    #expect(pieces.finish() == whole.finish())
  }

  /// Blobs stored uncompressed, of every size class (empty, small, over one
  /// 64 KB stored block), read back through libgit2 with their ids.
  @Test func packedStoredBlobsReadBack() throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("folio-pack-\(UUID())").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    let repository = try GitRepository.initialize(workTree: root)
    let pack = try GitPackFile(path: root + "/scratch.pack")
    let blobs: [[UInt8]] = [
      [], Array("{\n  \"a\": 1\n}\n".utf8), (0..<150_000).map { UInt8(truncatingIfNeeded: $0 % 251) },
      Array(repeating: 0x41, count: 0xFFFF),
    ]
    var ids: [GitOID] = []
    for blob in blobs {
      var id = [UInt8](repeating: 0, count: 20)
      try blob.withUnsafeBytes { raw in
        try id.withUnsafeMutableBytes { try pack.addBlob(raw, id: $0, compress: false) }
      }
      ids.append(GitOID(bytes: id))
      #expect(GitOID(bytes: id) == (try GitRepository.hashBlob(blob)))
    }
    let compressed = try pack.addBlob(Array("deflated".utf8))
    try pack.store(in: repository)
    for (blob, id) in zip(blobs, ids) { #expect(try repository.blob(id) == blob) }
    #expect(try repository.blob(compressed) == Array("deflated".utf8))
  }

  /// An op's log line, written directly or through its JSON form, is the
  /// same bytes.
  @Test(arguments: [
    (Int64(1_764_424_342_123), 0, "3f9c01", "flights", "1", true, Mutation.Kind.insert),
    (Int64(5), 9999, "r1", "t", "a \"quoted\" \\ pk\u{1}é", false, Mutation.Kind.upsert),
    (Int64(12_345_678_901_234), 42, "r\"x", "tä\nble", "", true, Mutation.Kind.insert),
  ])
  func opLogLineDirect(
    wall: Int64, counter: Int, replica: String, table: String, pk: String, fromTree: Bool, kind: Mutation.Kind
  ) {
    let op = Op(
      hlc: HLC(wall: wall, counter: counter, replica: replica), table: table, pk: pk,
      mutation: Mutation(kind: kind), fromTree: fromTree)
    var line = Array("before".utf8)
    op.appendLogLine(to: &line)
    #expect(line == Array("before".utf8) + op.json.compactBytes() + [0x0A])
    var text: [UInt8] = []
    op.hlc.appendText(to: &text)
    #expect(String(decoding: text, as: UTF8.self) == op.hlc.description)
  }

  @Test func deepMerge() {
    let base: JSONObject = ["a": ["x": 1, "y": ["p": 1]], "b": [1, 2], "c": "keep"]
    let patch: JSONObject = ["a": ["y": ["q": 2]], "b": [3], "d": nil]
    let merged = Importer.deepMerge(base, patch)
    #expect(
      JSONValue.object(merged).compactString
        == #"{"a":{"x":1,"y":{"p":1,"q":2}},"b":[3],"c":"keep","d":null}"#)
  }

  @Test func formatGuess() {
    #expect(TransferFormat.fromExtension("x/rows.JSONL") == .ndjson)
    #expect(TransferFormat.fromExtension("a.tsv") == .tsv)
    #expect(TransferFormat.fromExtension("noext") == nil)
    #expect(TransferFormat.sniff(Array("\u{FEFF} [ {".utf8)) == .json)
    #expect(TransferFormat.sniff(Array("{\"a\":1}\n".utf8)) == .ndjson)
    #expect(TransferFormat.sniff(Array("a\tb\n".utf8)) == .tsv)
    #expect(TransferFormat.sniff(Array("a,b\n".utf8)) == .csv)
    #expect(TransferFormat.sniff(Array("SQLite format 3\0rest".utf8)) == .sqlite)
  }
}

struct ImportOpTests {
  /// An import's compact op round-trips through the log form, replays as
  /// nothing, and a merge explains the imported document by a diff.
  @Test func fromTreeOpsCarryNoBody() throws {
    let op = Op(
      hlc: HLC(wall: 5, counter: 0, replica: "r1"), table: "t", pk: "a", mutation: Mutation(kind: .upsert),
      fromTree: true)
    let line = op.json.compactString
    #expect(line == #"{"hlc":"\#(op.hlc.description)","op":"upsert","pk":"a","table":"t","tree":true}"#)
    #expect(try Op(json: JSONValue(parsing: line)) == op)
    let resolver = DocumentResolver(table: TableConfig(name: "t", columns: ["views": .counter]))
    let base: JSONObject = ["id": "a", "views": 1]
    #expect(resolver.replay([op], onto: base, pk: "a") == base)
    let side = DocumentResolver.Side(
      document: ["id": "a", "views": 4], ops: [op], syntheticStamp: HLC(wall: 9, counter: 0, replica: "c"))
    let explained = resolver.explain(side, base: base, pk: "a")
    #expect(explained.count == 2)
    #expect(resolver.replay(explained, onto: base, pk: "a") == ["id": "a", "views": 4])
  }

  /// `batchSize` bounds memory, so a size below 1 is refused before
  /// anything is read; 1 itself works.
  @Test(arguments: [0, -1])
  func aBatchSizeBelowOneIsAUsageError(_ size: Int) throws {
    let (store, scratch) = try makeStore()
    defer { scratch.remove() }
    try scratch.write("in.ndjson", #"{"id":"a"}"# + "\n" + #"{"id":"b"}"# + "\n")
    var options = ImportOptions(path: scratch.path + "/in.ndjson")
    options.batchSize = size
    let error = #expect(throws: FolioError.self) { try store.importRows(into: "notes", options: options) }
    #expect(error?.code == .usage)
    options.batchSize = 1
    #expect(try store.importRows(into: "notes", options: options).created == 2)
  }
}
