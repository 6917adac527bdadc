/// A growable stack in memory it manages by hand, for the parser's working
/// storage.
///
/// An `Array` checks on every append that its buffer is not shared and that
/// the index is in bounds, and it cannot hand a run of its elements to a new
/// array without leaving something behind in their place. The parser pushes
/// and pops a few values per byte of input, so those checks were a large part
/// of its time. This stack does none of that: it is a plain pointer, and its
/// owner must follow the rules below.
///
/// - It does not free its memory by itself: call ``release()`` exactly once.
/// - A copy shares the memory: use one copy only, and treat the others as
///   gone.
/// - Indexes are not checked: keep them in `0..<count`.
struct ParserStack<Element> {
  /// The first element.
  private(set) var base: UnsafeMutablePointer<Element>
  /// The number of elements.
  private(set) var count = 0
  private var capacity: Int

  /// An empty stack with room for `capacity` elements.
  init(capacity: Int) {
    precondition(capacity > 0, "a stack needs some room")
    base = .allocate(capacity: capacity)
    self.capacity = capacity
  }

  /// The element at `index`, which must be in `0..<count`.
  @inline(__always)
  subscript(index: Int) -> Element {
    unsafeAddress { UnsafePointer(base + index) }
    nonmutating unsafeMutableAddress { base + index }
  }

  /// Pushes `element`.
  @inline(__always)
  mutating func append(_ element: consuming Element) {
    if count == capacity { grow() }
    (base + count).initialize(to: element)
    count += 1
  }

  /// Moves the elements from `start` on out into `body`, which must take
  /// them all (move or deinitialize them), and shrinks the stack to `start`.
  @inline(__always)
  mutating func popAll<R>(from start: Int, _ body: (UnsafeMutablePointer<Element>, Int) -> R) -> R {
    let n = count - start
    count = start
    return body(base + start, n)
  }

  /// Pops the top element.
  @inline(__always)
  mutating func removeLast() -> Element {
    count -= 1
    return (base + count).move()
  }

  /// Drops the elements from `start` on, keeping the memory.
  @inline(__always)
  mutating func removeAll(from start: Int = 0) {
    (base + start).deinitialize(count: count - start)
    count = start
  }

  /// Drops every element and frees the memory. The stack is unusable after.
  mutating func release() {
    removeAll()
    base.deallocate()
    capacity = 0
  }

  @inline(never)
  private mutating func grow() {
    let bigger = UnsafeMutablePointer<Element>.allocate(capacity: 2 * capacity)
    bigger.moveInitialize(from: base, count: count)
    base.deallocate()
    base = bigger
    capacity *= 2
  }
}
