import Dispatch
import Folio
import Glibc

struct ObserveCommand: Command {
  static let name = "observe"
  var runsUntilStopped: Bool { true }
  static let abstract = "Print a document, or a query's results, and then every change, as NDJSON."
  static let usage =
    "folio observe TABLE PK [--subscribe] | folio observe TABLE [QUERY OPTIONS] [--subscribe]"
  static let details = """
    ARGUMENTS:
      TABLE            The table.
      PK               The document to follow.
      QUERY OPTIONS    Those of 'folio query' (--order-by-child, --limit-to-first, --where, …),
                       to follow a query's results instead; see 'folio query --help'.

    OPTIONS:
      --subscribe      Also subscribe to what is observed, so that other replicas'
                       changes are pulled from the remote on their own (every
                       'sync: pull-every' of folio.yaml, 30s by default) and show up
                       here. A failed pull is reported on stderr and tried again.

    With PK, prints one line per event: first {"initial":true,"document":…}, then
    {"document":…,"old":…} after each transaction that changes the document (null
    when there is none). With a query, prints the results as NDJSON, one document per
    line, then one line per change of a document in them, in the order removed, added,
    moved, changed:
      {"event":"child_added","key":…,"prevKey":…,"document":…}
    where prevKey is the pk just before it (null if first); the same as
    'folio query … --follow'.

    Sees changes made by any process: the API, other 'folio' commands, sync, git, an
    editor. Each line is written at once, so '| jq' shows it live. Runs until
    interrupted (Ctrl-C, SIGINT or SIGTERM) and then exits 0.
    """

  var address: DocumentAddress?
  var query: QueryCommand?
  var subscribe = false

  init(arguments: [String]) throws {
    var arguments = arguments
    if let flag = arguments.firstIndex(of: "--subscribe") {
      subscribe = true
      arguments.remove(at: flag)
    }
    if arguments.count >= 2, !arguments[1].hasPrefix("-") {
      address = try DocumentAddress(arguments: arguments)
      return
    }
    let query = try QueryCommand(arguments: arguments)
    if query.format != "ndjson" || query.count || query.follow {
      throw UsageError("observe prints NDJSON events: --format, --count and --follow do not apply")
    }
    self.query = query
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    var subscription: Subscription?
    if subscribe {
      store.onPull { result in
        if case .failure(let error) = result {
          Output.error("folio: pull from '\(store.config.sync.remote)' failed: \(error); trying again")
        }
      }
    }
    defer { subscription?.cancel() }
    if let query {
      let made = try query.makeQuery(store)
      if subscribe { subscription = try made.subscribe() }
      return try Self.follow(made)
    }
    let address = address!
    if subscribe { subscription = try store.collection(address.table).findByID(address.pk).subscribe() }
    let live = try store.collection(address.table).findByID(address.pk).observeLocal(
      deliverOn: Self.deliveryQueue
    ) { document, event in
      let line: JSONValue =
        event.isInitial
        ? ["initial": true, "document": document?.json ?? .null]
        : ["document": document?.json ?? .null, "old": event.oldDocument?.json ?? .null]
      Output.printRaw(line.compactBytes() + [UInt8(ascii: "\n")])
    }
    try Self.waitForInterrupt()
    live.stop()
    return 0
  }

  /// Prints a query's results, then its child events, until interrupted.
  static func follow(_ query: Query) throws -> Int32 {
    let live = try query.observeLocal(deliverOn: deliveryQueue) { documents, event in
      var bytes: [UInt8] = []
      switch event {
      case .initial:
        for document in documents { bytes += document.json.compactBytes() + [UInt8(ascii: "\n")] }
      case .update(let update):
        for child in update.childEvents {
          let line: JSONValue = [
            "event": .string(child.kind.rawValue), "key": .string(child.key),
            "prevKey": child.prevKey.map(JSONValue.string) ?? .null, "document": child.document.json,
          ]
          bytes += line.compactBytes() + [UInt8(ascii: "\n")]
        }
      }
      Output.printRaw(bytes)
    }
    try waitForInterrupt()
    live.stop()
    return 0
  }

  /// Where events are printed. The library delivers on the main queue by
  /// default (seed `000_*`), and this thread blocks in `waitForInterrupt`
  /// rather than running it, so the command names its own serial queue.
  static let deliveryQueue = DispatchQueue(label: "folio.observe.print")

  /// Blocks until SIGINT or SIGTERM.
  static func waitForInterrupt() throws {
    try InterruptSignals().wait()
  }
}
