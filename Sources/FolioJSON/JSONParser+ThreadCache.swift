import FolioSystem
import Glibc

/// Holds one thread's reusable parser.
private final class JSONParserBox {
  // Unchecked: only the thread that owns the box uses it, and a parser never
  // calls out while it runs, so accesses cannot overlap; the runtime's
  // exclusivity check would cost a call on every parse.
  @exclusivity(unchecked) var parser = JSONParser()
}

extension JSONParser {
  /// The per-thread parser slot. Its destructor drops the box when the
  /// thread ends.
  private static let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    let rc = pthread_key_create(&key) { raw in
      guard let raw else { return }
      Unmanaged<JSONParserBox>.fromOpaque(raw).release()
    }
    precondition(rc == 0, "pthread_key_create failed: \(rc)")
    return key
  }()

  /// Runs `body` with this thread's parser, set up for `file`.
  ///
  /// A one-off parse would otherwise allocate its work stacks every time;
  /// reading many documents one by one then pays more for that than for
  /// the parsing. The parser never calls out while it runs, so a thread can
  /// not re-enter it.
  static func withThreadParser<T>(
    file: String?, _ body: (inout JSONParser) throws(FolioError) -> T
  ) throws(FolioError) -> T {
    let box: JSONParserBox
    if let raw = pthread_getspecific(threadKey) {
      box = Unmanaged<JSONParserBox>.fromOpaque(raw).takeUnretainedValue()
    } else {
      box = JSONParserBox()
      pthread_setspecific(threadKey, Unmanaged.passRetained(box).toOpaque())
    }
    box.parser.file = file
    box.parser.firstLine = 1
    box.parser.firstColumn = 1
    return try body(&box.parser)
  }
}
