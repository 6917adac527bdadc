import FolioCore
import FolioJSON

/// Firebase's server values in a written value: `{".sv": "timestamp"}`
/// becomes the server's clock in milliseconds, and
/// `{".sv": {"increment": n}}` becomes Folio's `increment` transform, so that
/// increments made over HTTP on two replicas sum after sync (Folio's increment transform).
/// Nulls are taken out too: in Firebase a null child is an absent one, and
/// an array holds no null (see ``FirebaseArrays``).
struct ServerValues {
  /// An increment's amount.
  enum Amount {
    /// An integer: Folio's `increment` transform, which merges as a sum.
    case integer(DecimalInteger)
    /// Any other number, as Firebase allows on a path that is not a
    /// counter column: the sum is assigned.
    case fraction(Double)
  }

  /// One increment: where, relative to the value's root, and by how much.
  typealias Increment = (path: [String], by: Amount)

  /// The value with timestamps filled in and increments taken out.
  var value: JSONValue?
  /// The increments, by path relative to the value's root (empty: the root).
  var increments: [Increment] = []

  /// Splits `value`. `now` is one reading of the clock for the whole
  /// request, as Firebase uses one per write.
  init(_ value: JSONValue, now: Int64) throws(RESTError) {
    var increments: [Increment] = []
    self.value = try Self.resolve(value, path: [], now: now, increments: &increments)
    self.increments = increments
  }

  private static func resolve(
    _ value: JSONValue, path: [String], now: Int64, increments: inout [Increment]
  ) throws(RESTError) -> JSONValue? {
    if case .array(let elements) = value {
      // Firebase holds no array: an array written is an object keyed by
      // index without its nulls, read back as an array when dense enough.
      var members: [(String, JSONValue)] = []
      for (index, element) in elements.enumerated() {
        let key = String(index)
        if let resolved = try resolve(element, path: path + [key], now: now, increments: &increments),
          !resolved.isNull
        {
          members.append((key, resolved))
        }
      }
      return FirebaseArrays.normalized(keyed: JSONObject(members)) ?? .null
    }
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
        guard let text = by.numberText else {
          throw RESTError(400, "increment must be a number (got \(by.compactString))")
        }
        if let amount = DecimalInteger(text) {
          increments.append((path, .integer(amount)))
        } else if let amount = Double(text), amount.isFinite {
          increments.append((path, .fraction(amount)))
        } else {
          throw RESTError(400, "increment must be a finite number (got \(text))")
        }
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

extension ServerValues.Amount {
  /// The amount as a floating-point number.
  var double: Double {
    switch self {
    case .integer(let amount): Double(amount.description) ?? 0
    case .fraction(let amount): amount
    }
  }
}
