/// The connections `folio serve` holds, by socket, and what each is doing:
/// the bookkeeping behind its connection limits and eviction. Pure state:
/// ``HTTPDaemon`` keeps it under a lock and makes the calls it decides on.
///
/// Two limits, each with its own remedy:
/// - ``capacity`` connections in all (event streams and requests alike).
/// - ``perAddress`` connections from one client address that are not event
///   streams. Streams are bounded by `--max-streams` instead, and each has
///   passed the token check; counting them here would cap a reverse proxy,
///   whose clients all share its address, below `--max-streams`.
///
/// A connection that would pass either limit first evicts the connection
/// that has waited longest for a request (one that never completed its
/// headers, or an idle keep-alive), from the same address for the first
/// limit and from anyone for the second: a client that sends half a
/// request and stops then costs its slot only until a real client needs
/// it, not for the whole timeout. With nothing to evict, the new
/// connection is refused, with a reply.
struct ConnectionTable {
  /// What a connection is doing.
  enum Phase: Equatable, Sendable {
    /// Connected, and no request in progress: its headers are not
    /// complete (or, between keep-alive requests, not begun).
    case awaitingRequest
    /// A request's headers are in; it is read, handled or answered.
    case busy
    /// An event stream.
    case stream
  }

  struct Entry {
    var address: [UInt8]
    var phase: Phase
    /// When it entered ``phase``: the oldest ``Phase/awaitingRequest`` entry
    /// is evicted first.
    var since: Double
    /// Told to close; it still holds its socket until libmicrohttpd lets go.
    var evicted = false
  }

  /// The answer to a new connection.
  enum Admission: Equatable {
    /// Let it in, after closing `evicting` (a socket) when not nil.
    case admit(evicting: Int32?)
    /// Refuse it, for the reason given (a sentence for the client and the log).
    case refuse(String)
  }

  /// Connections at once, from everyone.
  let capacity: Int
  /// Connections at once from one address, streams not counted.
  let perAddress: Int
  /// How many evicted connections may still be closing on top of
  /// ``capacity``: each eviction lets the new connection in at once, and
  /// past this many a flood of them is refused until some have closed.
  let closingAllowance: Int

  private(set) var entries: [Int32: Entry] = [:]

  init(capacity: Int, perAddress: Int, closingAllowance: Int = 64) {
    self.capacity = max(1, capacity)
    self.perAddress = max(1, perAddress)
    self.closingAllowance = closingAllowance
  }

  /// Decides on the connection just accepted on `socket` from `address`
  /// (the peer's IP, without the port), and records it unless refused.
  mutating func admit(_ socket: Int32, from address: [UInt8], now: Double) -> Admission {
    // A socket number is reused only once its last holder was closed, so an
    // entry still under it is one libmicrohttpd dropped without a word.
    entries[socket] = nil
    if entries.count >= capacity + closingAllowance {
      return .refuse("the server is at its limit of \(capacity) connections and is closing others; try again")
    }
    // One pass: the counts for both limits and the oldest candidate for each.
    var open = 0
    var fromAddress = 0
    var oldestFromAddress: (socket: Int32, since: Double)?
    var oldest: (socket: Int32, since: Double)?
    for (other, entry) in entries where !entry.evicted {
      open += 1
      let sameAddress = entry.phase != .stream && entry.address == address
      if sameAddress { fromAddress += 1 }
      guard entry.phase == .awaitingRequest else { continue }
      if oldest.map({ entry.since < $0.since }) ?? true { oldest = (other, entry.since) }
      if sameAddress, oldestFromAddress.map({ entry.since < $0.since }) ?? true {
        oldestFromAddress = (other, entry.since)
      }
    }
    var evicting: Int32?
    if fromAddress >= perAddress {
      guard let candidate = oldestFromAddress else {
        return .refuse(
          "too many connections from this address (at most \(perAddress) that are not event streams); try again"
        )
      }
      evicting = candidate.socket
    } else if open >= capacity {
      guard let candidate = oldest else {
        return .refuse("the server is at its limit of \(capacity) connections; try again")
      }
      evicting = candidate.socket
    }
    if let evicting { entries[evicting]?.evicted = true }
    entries[socket] = Entry(address: address, phase: .awaitingRequest, since: now)
    return .admit(evicting: evicting)
  }

  /// The entry for `socket` moves to `phase` (a request began, ended, or
  /// became a stream).
  mutating func set(_ socket: Int32, to phase: Phase, now: Double) {
    guard entries[socket] != nil, entries[socket]?.phase != phase else { return }
    entries[socket]?.phase = phase
    entries[socket]?.since = now
  }

  /// The connection on `socket` closed.
  mutating func remove(_ socket: Int32) {
    entries[socket] = nil
  }

  /// The entry's address and how long it has waited, for the log line of
  /// an eviction.
  func entry(_ socket: Int32) -> Entry? { entries[socket] }
}
