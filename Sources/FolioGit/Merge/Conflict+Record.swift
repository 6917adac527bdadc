import FolioCore
import FolioJSON
import FolioSystem
import Glibc

extension Conflict {
  /// Reads a record file (``json`` is its form), placing every fault at the
  /// member it concerns: records come with fetches, so they are untrusted,
  /// and `folio fsck` must say exactly what is wrong.
  /// - Throws: `INVALID_JSON`, or `INVALID_DOCUMENT` at `file:line:col`.
  static func record(bytes: [UInt8], file: String) throws -> Conflict {
    let value = try JSONValue(parsing: bytes, file: file)
    func fault(_ message: String, _ tokens: [String]) -> FolioError {
      let (line, column) = JSONPointer(tokens).lineAndColumn(in: bytes)
      return FolioError(
        .invalidDocument, "conflict record: " + message,
        location: .init(file: file, line: line, column: column))
    }
    func object(_ tokens: [String], _ keys: Set<String>, required: Set<String>) throws -> JSONObject {
      guard case .object(let object)? = JSONPointer(tokens).resolve(in: value) else {
        throw fault("'\(tokens.joined(separator: "."))' must be an object", tokens)
      }
      for (key, _) in object where !keys.contains(key) {
        throw fault("unknown member '\(key)'", tokens + [key])
      }
      for key in required.sorted() where object[key] == nil { throw fault("missing '\(key)'", tokens) }
      return object
    }
    func text(_ object: JSONObject, _ tokens: [String]) throws -> String {
      guard let text = object[tokens.last!]?.stringValue, !text.isEmpty else {
        throw fault("'\(tokens.joined(separator: "."))' must be a non-empty string", tokens)
      }
      return text
    }
    func stamp(_ object: JSONObject, _ tokens: [String]) throws -> HLC {
      guard let stamp = HLC(try text(object, tokens)) else {
        throw fault("'\(tokens.joined(separator: "."))' is not a stamp (wall-counter-replica)", tokens)
      }
      return stamp
    }
    guard case .object = value else {
      throw fault("a record must be a JSON object, not \(value.kindName)", [])
    }
    let top = try object(
      [], ["table", "pk", "path", "winner", "loser"], required: ["table", "pk", "path", "winner", "loser"])
    let winner = try object(["winner"], ["stamp", "replica", "value"], required: ["stamp", "replica"])
    let loser = try object(
      ["loser"], ["stamp", "replica", "value"], required: ["stamp", "replica", "value"])
    let winningStamp = try stamp(winner, ["winner", "stamp"])
    let losingStamp = try stamp(loser, ["loser", "stamp"])
    for (side, stamp) in [("winner", winningStamp), ("loser", losingStamp)] {
      let object = side == "winner" ? winner : loser
      if try text(object, [side, "replica"]) != stamp.replica {
        throw fault("'\(side).replica' is not the replica of '\(side).stamp'", [side, "replica"])
      }
    }
    return Conflict(
      table: try text(top, ["table"]), pk: try text(top, ["pk"]), path: FieldPath(try text(top, ["path"])),
      winningStamp: winningStamp, winningValue: winner["value"], losingStamp: losingStamp,
      losingValue: loser["value"]!)
  }
}

/// `folio fsck`'s look at `.folio/conflicts/`: every file there must be a
/// record, named by the SHA-1 of its canonical bytes, about a table that
/// `folio.yaml` defines and a valid pk.
package struct ConflictRecordCheck: StoreCheck {
  package init() {}

  package func problems(in store: Store) throws -> [FolioError] {
    let directory = store.rootPath + "/" + Conflict.folder
    var problems: [FolioError] = []
    for name in (try FileSystem.list(directory) ?? []).sorted() {
      let display = Conflict.folder + "/" + name
      func problem(
        _ message: String, _ code: FolioError.Code = .invalidDocument, at tokens: [String]? = nil,
        in bytes: [UInt8] = []
      ) {
        let (line, column) = tokens.map { JSONPointer($0).lineAndColumn(in: bytes) } ?? (1, 1)
        problems.append(FolioError(code, message, location: .init(file: display, line: line, column: column)))
      }
      var st = stat()
      if lstat(directory + "/" + name, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
        problem("'\(Conflict.folder)' holds only conflict records; move this folder out")
        continue
      }
      let bytes: [UInt8]
      do {
        guard let read = try FileSystem.read(directory + "/" + name) else { continue }
        bytes = read
      } catch let error as FolioError {
        problems.append(error.code == .unsafePath ? FileSystem.unsafePathError(display, isLink: true) : error)
        continue
      }
      guard bytes.count <= Limits.maximumDocumentBytes else {
        problem("conflict record is larger than \(Limits.maximumDocumentBytes >> 20) MiB", .tooLarge)
        continue
      }
      let record: Conflict
      do {
        record = try Conflict.record(bytes: bytes, file: display)
      } catch let error as FolioError {
        problems.append(error)
        continue
      }
      if store.config.table(named: record.table) == nil {
        problem(
          "conflict record for table '\(record.table)', which \(Config.fileName) does not define",
          .unknownTable,
          at: ["table"], in: bytes)
      }
      do {
        try PrimaryKey.validate(record.pk)
      } catch let error as FolioError {
        problem("conflict record: \(error.message)", .invalidPK, at: ["pk"], in: bytes)
      }
      if record.recordPath != display {
        problem(
          "conflict record named '\(name)', but a merge names it by the SHA-1 of its canonical bytes, '\(FileSystem.split(record.recordPath).name)': it was changed by hand"
        )
      }
    }
    return problems
  }
}
