import FolioCore
import FolioJSON

/// Firebase's rule for reading arrays: an object whose keys are all
/// integers, with more than half of the slots from 0 to its largest key
/// filled, reads as an array (the empty slots as null). Served reads of
/// documents and of values inside them follow it; tables and the store
/// stay objects keyed by pk, so that a table of numeric pks keeps its keys.
enum FirebaseArrays {
  /// `value` with each such object, at any depth, read as an array.
  static func shaped(_ value: JSONValue) -> JSONValue {
    switch value {
    case .array(let elements):
      return .array(elements.map(shaped))
    case .object(let object):
      var members: [(String, JSONValue)] = []
      members.reserveCapacity(object.count)
      var largest = -1
      var allIntegers = !object.isEmpty
      for (key, member) in object {
        members.append((key, shaped(member)))
        if allIntegers, let index = JSONObject.arrayIndex(key) {
          largest = max(largest, index)
        } else {
          allIntegers = false
        }
      }
      guard allIntegers, 2 * members.count > largest + 1 else { return .object(JSONObject(members)) }
      var elements = [JSONValue](repeating: .null, count: largest + 1)
      for (key, member) in members { elements[JSONObject.arrayIndex(key)!] = member }
      return .array(elements)
    default:
      return value
    }
  }

  /// A document as served: its value, shaped.
  static func shaped(_ document: Document) -> JSONValue { shaped(document.json) }
}
