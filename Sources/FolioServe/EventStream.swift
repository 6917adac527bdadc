internal import CSystem
import Dispatch
import FolioCore
import FolioJSON
import FolioQuery
import FolioSystem
import Glibc
import Synchronization

/// One client's server-sent event stream (Firebase's "Streaming from the
/// REST API"): `put` first with the value at the path, then `put` or `patch`
/// per committed transaction, from Folio's live queries.
///
/// Events wait in a bounded buffer that the HTTP layer drains as the socket
/// takes them. A client that falls `streamBufferBytes` behind is sent
/// `cancel` and dropped: memory per client stays bounded, and the writers
/// never wait for a reader.
///
/// The stream also ends with `cancel` when its path stops being readable
/// (its table leaves `folio.yaml`, see ``tablesChanged(to:)``), and with
/// `auth_revoked` when the server's token changes so that the credential
/// it was opened with no longer lets it in (``revoke()``).
final class EventStream: Sendable {
  /// The path followed.
  let path: RESTPath
  /// The token the client opened the stream with (`Bearer` or `?auth=`).
  let credential: String?

  private struct State {
    var buffer: [UInt8] = []
    var closed = false
    /// Live queries by the table they read, so that a table leaving or
    /// joining the config (a stream of the whole store) stops or starts
    /// just its own.
    var liveQueries: [String: LiveQuery] = [:]
    /// The tables a stream of the whole store follows, and their config.
    var followedTables: [String: TableConfig] = [:]
    /// Per followed document, the bytes last sent, so that a transaction
    /// that leaves the followed field alone sends nothing.
    var lastSent: [UInt8]?
    /// For the whole store: each table's value until every table's first
    /// value has arrived, then nil.
    var pendingRoot: [String: JSONValue]? = nil
  }

  private let state = Mutex(State())
  /// An eventfd that wakes the reading thread when an event is queued. A
  /// descriptor rather than a semaphore, so that the same `poll` also sees
  /// the client's socket hang up; an eventfd rather than a pipe, because a
  /// server holding a thousand streams spends one descriptor on each of
  /// them, not two.
  private let wakeFD: Int32
  /// The client's socket, watched for a hang-up while the stream waits;
  /// -1 until the HTTP layer names it.
  private let socketFD = Atomic<Int32>(-1)
  private let limit: Int
  private let keepAlive: Double
  private let onFinish: @Sendable (ObjectIdentifier) -> Void
  /// Live query handlers run here, one at a time, in commit order.
  private let queue = DispatchQueue(label: "folio.serve.stream")

  /// A stream of `path`; nil when no eventfd can be made (out of file
  /// descriptors).
  init?(
    path: RESTPath, credential: String?, limit: Int, keepAlive: Double,
    onFinish: @escaping @Sendable (ObjectIdentifier) -> Void
  ) {
    self.path = path
    self.credential = credential
    self.limit = limit
    self.keepAlive = keepAlive
    self.onFinish = onFinish
    let fd = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
    guard fd >= 0 else { return nil }
    wakeFD = fd
  }

  deinit {
    Glibc.close(wakeFD)
  }

  /// The client's socket (a descriptor the HTTP layer owns and keeps open
  /// for as long as it reads the stream): while nothing waits to be sent,
  /// the reading thread watches it, and a hang-up ends the stream at once.
  func watchHangUp(of fd: Int32) {
    socketFD.store(fd, ordering: .releasing)
  }

  private func wakeReader() {
    var one: UInt64 = 1
    // A counter at its limit already holds a wake-up: nothing is lost.
    _ = Glibc.write(wakeFD, &one, 8)
  }

  // MARK: Producing

  /// Starts the live queries behind ``path``.
  func follow(query: RESTQuery?, store: Store) throws {
    guard let table = path.table else {
      let tables = store.config.tables.map(\.name)
      state.withLock { state in
        for table in store.config.tables { state.followedTables[table.name] = table }
      }
      if tables.isEmpty {
        send("put", ["path": "/", "data": .null])
        return
      }
      state.withLock { $0.pendingRoot = [:] }
      for name in tables { try followTable(name, query: nil, store: store, prefix: "/" + name, root: tables) }
      return
    }
    state.withLock { state in
      if let config = store.config.table(named: table) { state.followedTables[table] = config }
    }
    guard store.config.table(named: table) != nil else {
      // Firebase streams null for a path with nothing at it.
      send("put", ["path": "/", "data": .null])
      return
    }
    guard let pk = path.pk else {
      try followTable(table, query: query, store: store, prefix: "", root: nil)
      return
    }
    let field = path.field
    let live = try store.collection(table).findByID(pk).observeLocal(deliverOn: queue) {
      [weak self] document, _ in
      guard let self else { return }
      let value = FirebaseArrays.shaped(
        field.map { document?.value.childValue(at: $0) ?? .null } ?? document?.json ?? .null)
      let bytes = value.compactBytes()
      let changed = self.state.withLock { state in
        defer { state.lastSent = bytes }
        return state.lastSent != bytes
      }
      if changed { self.send("put", ["path": "/", "data": value]) }
    }
    attach(live, table: table)
  }

  private func followTable(
    _ table: String, query: RESTQuery?, store: Store, prefix: String, root: [String]?
  ) throws {
    let made = try (query ?? RESTQuery([:])).query(on: store.collection(table))
    let live = try made.observeLocal(deliverOn: queue) { [weak self] documents, event in
      guard let self else { return }
      switch event {
      case .initial:
        var object = JSONObject()
        for document in documents { object[document.pk] = FirebaseArrays.shaped(document) }
        let value: JSONValue = object.isEmpty && query == nil ? .null : .object(object)
        guard let root else {
          self.send("put", ["path": .string(prefix.isEmpty ? "/" : prefix), "data": value])
          return
        }
        // The whole store's first event is one put, once every table has
        // given its first value.
        let ready: JSONValue? = self.state.withLock { state in
          state.pendingRoot?[table] = value
          guard let pending = state.pendingRoot, pending.count == root.count else { return nil }
          state.pendingRoot = nil
          var out = JSONObject()
          for name in root where !(pending[name]?.isNull ?? true) { out[name] = pending[name] }
          return out.isEmpty ? .null : .object(out)
        }
        if let ready { self.send("put", ["path": "/", "data": ready]) }
      case .update(let update):
        var changes = JSONObject()
        for child in update.childEvents {
          changes[child.key] = child.kind == .removed ? .null : FirebaseArrays.shaped(child.document)
        }
        if changes.isEmpty { return }
        // One event per transaction: a put for one document, else a patch.
        if changes.count == 1, let only = changes.members.first {
          self.send("put", ["path": .string(prefix + "/" + only.key), "data": only.value])
        } else {
          self.send("patch", ["path": .string(prefix.isEmpty ? "/" : prefix), "data": .object(changes)])
        }
      }
    }
    attach(live, table: table)
  }

  private func attach(_ live: LiveQuery, table: String) {
    let closed = state.withLock { state in
      if !state.closed { state.liveQueries[table] = live }
      return state.closed
    }
    if closed { live.stop() }
  }

  // MARK: Config and token changes

  /// The server opened `store` on a changed `folio.yaml`. A stream of a
  /// table that left the config, or whose entry changed (another folder or
  /// key), is sent `cancel` and ends: its path is no longer the data it
  /// was. A stream of the whole store puts null at a table that left, and
  /// starts following a table that joined (its first value as a put at
  /// `/name`), as if the table were a child written or removed.
  func tablesChanged(to store: Store) {
    guard let table = path.table else {
      let (gone, added) = state.withLock { state -> ([String], [TableConfig]) in
        let now = Dictionary(store.config.tables.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let gone = state.followedTables.filter { now[$0.key] != $0.value }.map(\.key).sorted()
        let added = store.config.tables.filter { state.followedTables[$0.name] != $0 }
        for name in gone { state.followedTables[name] = nil }
        for table in added { state.followedTables[table.name] = table }
        return (gone, added)
      }
      for name in gone {
        state.withLock { $0.liveQueries.removeValue(forKey: name) }?.stop()
        send("put", ["path": .string("/" + name), "data": .null])
      }
      for table in added {
        do {
          try followTable(table.name, query: nil, store: store, prefix: "/" + table.name, root: nil)
        } catch {
          end(with: "cancel")
          return
        }
      }
      return
    }
    let followed = state.withLock { $0.followedTables[table] }
    if followed != store.config.table(named: table) { end(with: "cancel") }
  }

  /// The server's token changed and this stream's credential no longer
  /// lets it in: `auth_revoked`, then the end (Firebase: the client must
  /// authenticate again and reopen).
  func revoke() { end(with: "auth_revoked", text: "credential is no longer valid") }

  /// Replaces whatever waits with one last `event` and ends the stream.
  /// Firebase: `cancel` carries null (JSON), `auth_revoked` a line of
  /// plain text saying why, which the SDKs read as it is.
  private func end(with event: String, text: String = "null") {
    let live = state.withLock { state -> [LiveQuery] in
      if state.closed { return [] }
      state.buffer = Array("event: \(event)\ndata: \(text)\n\n".utf8)
      state.closed = true
      defer { state.liveQueries = [:] }
      return Array(state.liveQueries.values)
    }
    for query in live { query.stop() }
    wakeReader()
  }

  /// Queues one event. Past the buffer limit the client is too slow: what
  /// waits is replaced by `cancel` and the stream ends.
  func send(_ event: String, _ data: JSONValue) {
    let bytes = Array("event: \(event)\ndata: ".utf8) + data.compactBytes() + Array("\n\n".utf8)
    let overflow = state.withLock { state -> Bool in
      if state.closed { return false }
      if state.buffer.count + bytes.count > limit { return true }
      state.buffer += bytes
      return false
    }
    if overflow {
      end(with: "cancel")
    } else {
      wakeReader()
    }
  }

  /// Ends the stream after what is buffered, as on server shutdown.
  func close() {
    let live = state.withLock { state -> [LiveQuery] in
      state.closed = true
      defer { state.liveQueries = [:] }
      return Array(state.liveQueries.values)
    }
    for query in live { query.stop() }
    wakeReader()
  }

  // MARK: Consuming (the HTTP layer's thread for this connection)

  /// Copies up to `max` bytes into `destination`, waiting for events; sends
  /// `keep-alive` when idle. Returns nil at the end of the stream, and as
  /// soon as the client hangs up.
  func read(into destination: UnsafeMutableRawBufferPointer) -> Int? {
    while true {
      let result: Int?? = state.withLock { state in
        if !state.buffer.isEmpty {
          let count = min(destination.count, state.buffer.count)
          state.buffer.withUnsafeBytes {
            destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<count]))
          }
          state.buffer.removeFirst(count)
          return .some(count)
        }
        return state.closed ? .some(nil) : nil
      }
      if let result { return result }
      switch waitForWake() {
      case .woken: continue
      case .hungUp:
        close()
        return nil
      case .idle:
        state.withLock { state in
          if state.buffer.isEmpty && !state.closed {
            state.buffer = Array("event: keep-alive\ndata: null\n\n".utf8)
          }
        }
      }
    }
  }

  private enum Wake { case woken, hungUp, idle }

  /// Waits up to the keep-alive interval for an event to be queued or the
  /// client's socket to hang up.
  private func waitForWake() -> Wake {
    let socket = socketFD.load(ordering: .acquiring)
    // POLLRDHUP (Linux, <poll.h> under _GNU_SOURCE): the peer closed its end.
    let readHangUp: Int16 = 0x2000
    var fds = [
      pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
      pollfd(fd: socket, events: readHangUp, revents: 0),
    ]
    let milliseconds = Int32(min(keepAlive * 1000, Double(Int32.max)))
    let ready = poll(&fds, 2, milliseconds)
    if ready < 0 { return errno == EINTR ? .woken : .idle }
    if ready == 0 { return .idle }
    if fds[1].revents & (readHangUp | Int16(POLLHUP) | Int16(POLLERR)) != 0 { return .hungUp }
    // One read takes every wake-up queued and sets the counter to zero.
    var count: UInt64 = 0
    _ = Glibc.read(wakeFD, &count, 8)
    return .woken
  }

  /// Called once when the HTTP layer lets go of the stream (the client left
  /// or the stream ended): stops the live queries and frees the slot.
  func finish() {
    close()
    onFinish(ObjectIdentifier(self))
  }
}

/// The open streams, so that there are at most `maxStreams` and shutdown
/// can end them all.
final class StreamRegistry: Sendable {
  private let open = Mutex<[ObjectIdentifier: EventStream]>([:])
  /// Set by ``closeAll()``: a stream opened while the server stops would
  /// keep its connection's thread, and so the stop, waiting forever.
  private let closed = Atomic<Bool>(false)

  /// A new stream of `path`, or nil when `maxStreams` are open (or no
  /// file descriptor is left for it).
  func open(path: RESTPath, credential: String?, options: ServeOptions) -> EventStream? {
    guard
      let stream = EventStream(
        path: path, credential: credential, limit: options.streamBufferBytes,
        keepAlive: options.keepAliveSeconds,
        onFinish: { [weak self] id in
          _ = self?.open.withLock { $0.removeValue(forKey: id) }
        })
    else { return nil }
    let id = ObjectIdentifier(stream)
    let admitted = open.withLock { streams in
      guard streams.count < options.maxStreams, !closed.load(ordering: .sequentiallyConsistent) else {
        return false
      }
      streams[id] = stream
      return true
    }
    return admitted ? stream : nil
  }

  /// Every stream open now.
  var all: [EventStream] { open.withLock { Array($0.values) } }

  /// Ends every stream (server shutdown).
  func closeAll() {
    let streams = open.withLock { streams in
      closed.store(true, ordering: .sequentiallyConsistent)
      return Array(streams.values)
    }
    for stream in streams { stream.close() }
  }
}
