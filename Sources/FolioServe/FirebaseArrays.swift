import FolioCore
import FolioJSON

/// Firebase's arrays. Firebase stores no arrays: an array written is an
/// object keyed `"0"`, `"1"`, … without its null elements, and a write
/// below it (`tags/1`) addresses one of those keys. An object read back
/// whose keys are all integers, the largest below twice their number,
/// comes out as an array, its empty slots as null (`maxKey < 2 * numKeys`
/// in the SDKs' `ChildrenNode.val`).
///
/// Folio keeps a document's arrays as JSON arrays in the file, where a
/// person reads them as such, and applies the same two rules: a write
/// stores an array without its nulls, and addresses its elements as those
/// keys (``keyed(_:)``, then ``normalized(keyed:)``); a read shapes
/// (``shaped(_:)``). Tables and the store stay objects keyed by pk, so that
/// a table of numeric pks keeps its keys.
enum FirebaseArrays {
  /// `value` as a read serves it: every integer-keyed object dense enough,
  /// and every array, at any depth, read as Firebase reads it back.
  static func shaped(_ value: JSONValue) -> JSONValue {
    switch value {
    case .array(let elements):
      // An array in a file may hold nulls (written by hand or by an older
      // Folio); Firebase holds none, so it reads as its other elements.
      var members: [(String, JSONValue)] = []
      members.reserveCapacity(elements.count)
      for (index, element) in elements.enumerated() where !element.isNull {
        members.append((String(index), shaped(element)))
      }
      return arrayOrObject(members)
    case .object(let object):
      return arrayOrObject(object.map { ($0.key, shaped($0.value)) }, keepEmpty: true)
    default:
      return value
    }
  }

  /// A document as served: its value, shaped.
  static func shaped(_ document: Document) -> JSONValue { shaped(document.json) }

  /// An array as the object of its elements keyed by index, without its
  /// nulls: what a write below it addresses.
  static func keyed(_ elements: [JSONValue]) -> JSONObject {
    var members: [(String, JSONValue)] = []
    for (index, element) in elements.enumerated() where !element.isNull {
      members.append((String(index), element))
    }
    return JSONObject(members)
  }

  /// The value a patched ``keyed(_:)`` object is stored as: an array if
  /// Firebase would read it back as one, else the object; nil when the
  /// patch left it empty (absent).
  static func normalized(keyed object: JSONObject) -> JSONValue? {
    guard !object.isEmpty else { return nil }
    return arrayOrObject(object.map { ($0.key, $0.value) })
  }

  /// An array when every key is an index and the largest is below twice
  /// their number, holes as null; else the object.
  private static func arrayOrObject(_ members: [(String, JSONValue)], keepEmpty: Bool = false) -> JSONValue {
    guard !members.isEmpty else { return keepEmpty ? .object(JSONObject()) : .array([]) }
    var largest = -1
    for (key, _) in members {
      guard let index = JSONObject.arrayIndex(key) else { return .object(JSONObject(members)) }
      largest = max(largest, index)
    }
    guard largest < 2 * members.count else { return .object(JSONObject(members)) }
    var elements = [JSONValue](repeating: .null, count: largest + 1)
    for (key, member) in members { elements[JSONObject.arrayIndex(key)!] = member }
    return .array(elements)
  }
}
