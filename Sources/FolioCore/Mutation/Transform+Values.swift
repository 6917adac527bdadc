import FolioJSON

/// Transforms from plain Swift values, for `apply(…transforms:)`.
///
/// ```swift
/// let n: Int64 = 3
/// let tags = ["offline", "home"]
/// try store.apply(table: "todos", pk: "a", op: .update,
///                 transforms: ["views": .increment(n), "tags": .arrayUnion(tags)])
/// ```
extension JSONValue {
  /// The JSON form of an increment by `by`, of any integer type.
  public static func increment<T: BinaryInteger>(_ by: T) -> JSONValue {
    Transform.increment(DecimalInteger(exactly: by)).json
  }

  /// The JSON form of an increment by a ``DecimalInteger`` of any size.
  public static func increment(_ by: DecimalInteger) -> JSONValue {
    Transform.increment(by).json
  }

  /// The JSON form of an arrayUnion of Swift values.
  ///
  /// A value with no JSON form (a `Double.nan`, an `Encodable` that throws)
  /// gives a malformed transform, which `apply` refuses with
  /// `LOCAL_CONSTRAINT` before anything is written. (Not a throwing call, so
  /// that literals keep working in any context.)
  public static func arrayUnion<S: Sequence>(_ values: S) -> JSONValue where S.Element: JSONRepresentable {
    transform("arrayUnion", values, Transform.arrayUnion)
  }

  /// The JSON form of an arrayRemove of Swift values; see
  /// ``arrayUnion(_:)-(S)``.
  public static func arrayRemove<S: Sequence>(_ values: S) -> JSONValue where S.Element: JSONRepresentable {
    transform("arrayRemove", values, Transform.arrayRemove)
  }

  private static func transform<S: Sequence>(
    _ name: String, _ values: S, _ make: ([JSONValue]) -> Transform
  ) -> JSONValue where S.Element: JSONRepresentable {
    do {
      return make(try values.map { try $0.jsonValue }).json
    } catch {
      // seed 002: "values" must be an array; this one is the reason it isn't.
      return ["op": .string(name), "values": .string("not convertible to JSON: \(error)")]
    }
  }
}
