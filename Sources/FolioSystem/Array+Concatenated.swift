extension Array where Element == String {
  /// The strings with `separator` between them, as `joined(separator:)`
  /// gives them. That one is generic code the compiler does not specialise
  /// across modules: its first call looks up the collection's conformances
  /// at run time, by a scan of every conformance in the binary, a cost each
  /// fresh process would pay on its way to opening a store.
  package func concatenated(separator: String = "") -> String {
    var result = ""
    for (index, string) in enumerated() {
      if index > 0 { result += separator }
      result += string
    }
    return result
  }
}
