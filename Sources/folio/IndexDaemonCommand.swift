import Folio

struct IndexDaemonCommand: Command {
  static let name = "index-daemon"
  var runsUntilStopped: Bool { true }
  static let abstract = "Keep the order indexes vouched for, so fresh queries skip the stat of every file."
  static let usage = "folio index-daemon [--idle DURATION] | --stop | --status"
  static let details = """
    OPTIONS:
      --idle DURATION   Exit after this long without a query (default: index.idle in
                        folio.yaml, else 30m).
      --stop            Stop the store's index daemon and wait until it has exited.
      --status          Say whether an index daemon runs for the store, and its pid.
      --on-demand       Started by a query (detached, output to /dev/null); you need not pass it.

    In the foreground, the daemon answers fresh 'folio query' and 'folio export' processes,
    on .git/folio/index/publisher.sock, whether the order indexes describe the files now,
    so they need not take a stat of every document file. It exits after the idle timeout,
    on Ctrl-C (SIGINT) or SIGTERM, on '--stop', when folio.yaml or the folio binary changes,
    or when the store goes away (its .git/folio folder deleted or moved). One publisher runs
    per store.

    A query that finds no daemon (or 'folio watch') starts one in the background by itself,
    unless FOLIO_INDEX_DAEMON=off is in the environment or folio.yaml says
    'index: {daemon: off}'. DURATION is a number and a unit: 500ms, 5s, 2m, 1h.
    """

  enum Action { case run, stop, status }

  var action: Action
  var idle: Duration?
  var onDemand: Bool

  init(arguments: [String]) throws {
    let parsed = try CommandLineArguments(
      arguments, options: ["--idle"], flags: ["--stop", "--status", "--on-demand"])
    try parsed.expectPositionals(0...0)
    if parsed.flag("--stop") && parsed.flag("--status") {
      throw UsageError("'--stop' and '--status' do not go together")
    }
    action = parsed.flag("--stop") ? .stop : parsed.flag("--status") ? .status : .run
    onDemand = parsed.flag("--on-demand")
    if let text = parsed.value("--idle") {
      guard action == .run else {
        throw UsageError("'--idle' goes with running the daemon, not --stop or --status")
      }
      do {
        idle = try DurationParser.parse(text)
      } catch let error as FolioError {
        throw UsageError("--idle: \(error.message)")
      }
    }
  }

  func run(in context: CommandContext) throws -> Int32 {
    let store = try context.openStore()
    switch action {
    case .status:
      Output.print(store.indexDaemonStatus().description)
      return 0
    case .stop:
      if let pid = try store.stopIndexDaemon() {
        Output.print("stopped the index daemon (pid \(pid))")
      } else {
        Output.print("no index daemon")
      }
      return 0
    case .run:
      let idle = self.idle ?? store.config.index.idle
      let daemon = try store.runIndexDaemon(idle: idle)
      // SIGTERM is also how `folio index-daemon --stop` asks.
      _ = try InterruptSignals { daemon.stop() }
      if !onDemand {
        Output.error(
          "index daemon (pid \(daemon.pid)) for \(store.root.path); exits after \(DurationParser.format(idle)) without a query"
        )
      }
      let reason = try daemon.run()
      if !onDemand { Output.error("index daemon stopped: \(reason.rawValue)") }
      return 0
    }
  }
}
