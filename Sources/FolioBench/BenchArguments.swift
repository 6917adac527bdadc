/// Walks a benchmark's `arguments`: `handle` gets each flag and a function
/// that takes the value after it (a flag without one stops the run).
func forEachBenchArgument(_ arguments: [String], _ handle: (_ flag: String, _ value: () -> String) -> Void) {
  var i = 0
  while i < arguments.count {
    let flag = arguments[i]
    handle(flag) {
      i += 1
      guard i < arguments.count else { fatalError("\(flag) needs a value") }
      return arguments[i]
    }
    i += 1
  }
}
