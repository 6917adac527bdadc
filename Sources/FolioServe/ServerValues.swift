import FolioCore
import FolioJSON

/// Firebase's server values in a written value: `{".sv": "timestamp"}`
/// becomes the server's clock in milliseconds, and
/// `{".sv": {"increment": n}}` becomes Folio's `increment` transform, so that
/// increments made over HTTP on two replicas sum after sync (the Kizuna transform rules).
/// Nulls are taken out too: in Firebase a null child is an absent one.
struct ServerValues {
  /// The value with timestamps filled in and increments taken out.
  var value: JSONValue?
  /// The increments, by path relative to the value's root (empty: the root).
  var increments: [(path: [String], by: DecimalInteger)] = []

  /// Splits `value`. `now` is one reading of the clock for the whole
  /// request, as Firebase uses one per write.
  init(_ value: JSONValue, now: Int64) throws(RESTError) {
    var increments: [(path: [String], by: DecimalInteger)] = []
    self.value = try Self.resolve(value, path: [], now: now, increments: &increments)
    self.increments = increments
  }

  private static func resolve(
    _ value: JSONValue, path: [String], now: Int64, increments: inout [(path: [String], by: DecimalInteger)]
  ) throws(RESTError) -> JSONValue? {
    guard case .object(let object) = value else { return value }
    if let sentinel = object[".sv"] {
      guard object.count == 1 else {
        throw RESTError(400, "a server value {\".sv\": …} has no other members")
      }
      switch sentinel {
      case .string("timestamp"):
        return .number(String(now))
      case .object(let spec) where spec.count == 1 && spec["increment"] != nil:
        let by = spec["increment"]!
        guard let text = by.numberText, let amount = DecimalInteger(text) else {
          throw RESTError(400, "LOCAL_CONSTRAINT: increment must be an integer (got \(by.compactString))")
        }
        increments.append((path, amount))
        return nil
      default:
        throw RESTError(400, "unknown server value \(sentinel.compactString)")
      }
    }
    // Null means absent, at any depth, as in Firebase: a null member is
    // dropped, and an object left with nothing (and no increment to
    // hold) is absent too.
    var out = JSONObject()
    let incrementsBefore = increments.count
    for (key, member) in object {
      if let resolved = try resolve(member, path: path + [key], now: now, increments: &increments),
        !resolved.isNull
      {
        out[key] = resolved
      }
    }
    if out.isEmpty && increments.count == incrementsBefore { return .null }
    return .object(out)
  }
}
