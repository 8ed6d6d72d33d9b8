import CommandLineSupport
import Synchronization
import DNSSD
import DiscoveryCore
import TransportCore
import TransportPOSIX

@main
struct SvcBrowse {
    static func main() async {
        await ToolMain.run(BrowseOptions.spec, validate: BrowseOptions.init, json: { $0.json }) { options in
            if options.listDomains {
                try await DomainListing.list(options)
            } else if options.allTypes {
                try await browseAllTypes(options)
            } else if options.isUnicast {
                try await WideAreaBrowse.browse(options)
            } else {
                try await browse(options)
            }
            return .success
        }
    }

    /// Prints events until `--once` has its first batch, `--timeout` passes, a signal, or
    /// the reader of stdout goes away.
    static func browse(_ options: BrowseOptions) async throws {
        let browser = ServiceBrowser(type: options.type, domain: options.domain, interface: options.interface)
        let probes = try probeLoop(options)
        defer { probes?.shutdown() }
        try await run(options, minimumWait: browser.minimumWait) { firstBatch in
            guard let events = try await firstBatch.startingBrowse("browsing for \(options.type) in \(options.domain)", {
                try await browser.start(onDaemonStatus: noteDaemonStatus)
            }) else { return }
            // Started once the daemon answered: a host without one sends no DNS query either.
            let legacy = options.browsesLegacyDomains ? LegacyBrowseDomains.start(options) : nil
            defer { legacy?.cancel() }
            var printer = EventPrinter()
            for try await event in events {
                // The batch is complete once the legacy browse domains were read too.
                if event == .completeForNow { await legacy?.firstBatch() }
                printer.print(event, at: timestampNow()) { event, time in await line(for: event, at: time, options, probes: probes) }
                if event == .completeForNow && options.once {
                    firstBatch.end()
                    break
                }
            }
            // Stopped (--timeout, a signal): the instances still waiting to be resolved are
            // listed as they are, not after their turn (16 at a time, 3 s each: a host announcing
            // thousands of names that never resolve had kept svc-browse running for minutes).
            if Task.isCancelled {
                await resolves.close()
                printer.cancel()
            }
            await printer.drain()
        }
    }

    /// With `--verify`, the event loop the probes' connections live on; nil otherwise.
    /// - Throws: `ToolFailure` (71) when the loop cannot start.
    static func probeLoop(_ options: BrowseOptions) throws -> EventLoop? {
        guard options.verify else { return nil }
        do {
            return try EventLoop(name: "svc-browse")
        } catch {
            throw ToolFailure(.osError, "cannot start the event loop for --verify: \(error)")
        }
    }

    static func noteDaemonStatus(_ status: DaemonStatus) {
        switch status {
        case .lost(let error): Console.note("\(error.lostMessage); browsing resumes as soon as it is back")
        case .restored: Console.note("avahi-daemon is back; browsing resumed")
        }
    }

    /// How much longer than its minimum wait `--once` waits at most for its first batch
    /// (unless `--timeout` says): a host that keeps announcing new names would otherwise
    /// hold it open for as long as it likes.
    static let onceGrace = Duration.seconds(3)

    /// Runs `body` until it returns, `--timeout` passes, a signal, or the reader of stdout
    /// goes away. With `--once`, `--timeout` (default `minimumWait` + `onceGrace`) bounds
    /// only the wait for the first batch: `body` calls `FirstBatch.end()` when it has it,
    /// and the lines of events already seen are still printed after the bound. `body` starts
    /// its browses through `FirstBatch.startingBrowse`, so that the bound also ends the wait
    /// for an avahi-daemon that does not answer.
    static func run(_ options: BrowseOptions, minimumWait: Duration,
                    _ body: @escaping @Sendable (FirstBatch) async throws -> Void) async throws {
        let firstBatch = FirstBatch()
        let work = Task { try await body(firstBatch) }
        let signals = TerminationSignals(queue: .main) { _ in work.cancel() }
        // `svc-browse | head -1`: once the reader is gone there is nobody to tell; stop, status 0.
        Console.whenStandardOutputCloses { work.cancel() }
        if let timeout = options.timeout ?? (options.once ? minimumWait + onceGrace : nil) {
            Task {
                try await Task.sleep(for: timeout)
                if options.once && !firstBatch.isWaitingForDaemon {
                    guard !firstBatch.isDone else { return }
                    Console.note("stopped waiting for the first batch after \(timeout.secondsText) (the most --once waits): the list may be incomplete")
                }
                firstBatch.boundPassed(timeout)
                work.cancel()
            }
        }
        let result = await work.result
        withExtendedLifetime(signals) {}
        try result.get()
    }

    /// `--resolve`'s resolves: each holds a resolver and then two record browsers in
    /// avahi-daemon (on the process's one connection to it, `DaemonClient`, whose objects per
    /// client the daemon limits), so only so many run at once; the others wait in order,
    /// within a bound (more instances than that are listed unresolved).
    static let resolves = ConcurrencyLimit(limit: 16, maximumWaiting: 4096)

    static func line(for event: BrowseEvent, at time: String, _ options: BrowseOptions, probes: EventLoop?) async -> String? {
        switch event {
        case .added(let instance, let interfaces):
            var resolution: Result<(ResolvedService, [SocketEndpoint]), any Error>?
            var answering: Result<Void, any Error>?
            if options.resolve {
                resolution = await Result {
                    try await resolves.run {
                        let resolved = try await instance.resolve(interfaceIndex: interfaces.first?.index ?? 0, timeout: .seconds(3))
                        return (resolved, try await resolved.lookUpAddresses(timeout: .seconds(3)))
                    }
                }
                switch resolution {
                case .failure(ConcurrencyLimit.Refusal.queueFull):
                    Console.note("not resolving \(TerminalSafe.quoted(instance.name)): \(resolves.limit) resolves run and \(resolves.maximumWaiting) wait already; it is listed without host and addresses")
                case .failure(let error) where !(error is CancellationError) && error as? ConcurrencyLimit.Refusal != .cancelled:
                    Console.note("could not resolve \(TerminalSafe.quoted(instance.name)): \(error)")
                default: break
                }
            }
            if let probes, case .success(let (resolved, endpoints)) = resolution {
                // A host that left without a goodbye stays in caches; only a connection tells.
                // A room is asked for its HELLO (quietly: see RoomProbe); other types only connect.
                answering = await Result {
                    if instance.type.baseType == ServiceType.p2pipp.baseType {
                        try await RoomProbe.check(endpoints, interface: options.interface?.name, announcedKey: resolved.txt?.string(forKey: "key"),
                                                  timeout: .seconds(2), on: probes)
                    } else {
                        let (socket, _) = try await TCPConnector.connect(to: endpoints, interface: options.interface?.name, timeout: .seconds(2), on: probes)
                        socket.close()
                    }
                }
            }
            return BrowseOutput.format("added", instance, interfaces, resolution.flatMap { try? $0.get() }, answering: answering,
                                       time: time, json: options.json)
        case .removed(let instance):
            return BrowseOutput.format("removed", instance, nil, nil, time: time, json: options.json)
        case .interfacesChanged(let instance, let interfaces):
            return BrowseOutput.format("interfaces", instance, interfaces, nil, time: time, json: options.json)
        case .completeForNow:
            return options.json ? JSONValue.object([("event", .string("complete")), ("time", .string(time))]).serialized : nil
        }
    }
}

/// Whether `--once`'s first batch is complete, so that its deadline no longer applies; and
/// whether `run` is waiting for avahi-daemon to take a browse, and the bound that stopped it.
final class FirstBatch: Sendable {
    private let done = Atomic<Bool>(false)
    private let waitingForDaemon = Atomic<Bool>(false)
    private let bound = Mutex<Duration?>(nil)

    func end() { done.store(true, ordering: .releasing) }

    var isDone: Bool { done.load(ordering: .acquiring) }

    /// Whether a browse is being started (avahi-daemon has not answered yet).
    var isWaitingForDaemon: Bool { waitingForDaemon.load(ordering: .acquiring) }

    /// `run`'s bound (`--timeout`, or `--once`'s) passed and it stops `body`.
    func boundPassed(_ bound: Duration) { self.bound.withLock { $0 = bound } }

    /// Starts a browse (`start`), which waits for avahi-daemon to take it: milliseconds, but up
    /// to D-Bus's 25 s reply timeout when the daemon is hung or stopped. When `run`'s bound
    /// passes first, fails saying that the daemon did not answer within it (`.timedOut`: 69);
    /// when a signal or the reader's going away stopped `run`, returns nil: nothing to list.
    /// - Parameter operation: what is started, e.g. "browsing for _p2pipp._tcp in local.".
    func startingBrowse<Events>(_ operation: String, _ start: () async throws -> Events) async throws -> Events? {
        waitingForDaemon.store(true, ordering: .releasing)
        defer { waitingForDaemon.store(false, ordering: .releasing) }
        do {
            return try await start()
        } catch is CancellationError {
            guard let bound = bound.withLock({ $0 }) else { return nil }
            throw DNSSDError.notAnswering(while: operation, within: bound)
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// Prints events as soon as their lines are ready (resolving takes a round trip), in order
/// for each instance: an instance's `removed` line never comes before its `added` line, and
/// cancels a resolve still running for it. `complete` comes after every line before it.
///
/// Only live work is kept: an instance's entry goes when its last task ends, so a host that
/// keeps announcing and withdrawing new names does not make the table grow.
/// - Important: used from one task at a time (the browse loop); the tasks it starts reach the
///   table only through `Ledger`.
struct EventPrinter {
    private let ledger = Ledger()
    private var completion: Task<Void, Never>?

    mutating func print(_ event: BrowseEvent, at time: String,
                        line: @escaping @Sendable (BrowseEvent, String) async -> String?) {
        let instance: ServiceInstance?
        let predecessors: [Task<Void, Never>]
        switch event {
        case .added(let added, _), .interfacesChanged(let added, _):
            instance = added
            predecessors = ledger.latest(for: added).map { [$0] } ?? []
        case .removed(let removed):
            instance = removed
            predecessors = ledger.latest(for: removed).map { [$0] } ?? []
            predecessors.forEach { $0.cancel() } // its resolve is moot now
        case .completeForNow:
            instance = nil
            predecessors = ledger.all()
        }
        guard let instance else {
            completion = Task {
                for predecessor in predecessors { await predecessor.value }
                if let text = await line(event, time) { Console.out(text) }
            }
            return
        }
        let ledger = ledger
        let generation = ledger.nextGeneration()
        // The task is recorded before it can finish: it waits for `recorded` first.
        let (recorded, record) = AsyncStream<Void>.makeStream()
        let task = Task {
            for await _ in recorded {}
            for predecessor in predecessors { await predecessor.value }
            if let text = await line(event, time) { Console.out(text) }
            ledger.finished(instance, generation: generation)
        }
        ledger.record(task, for: instance, generation: generation)
        record.finish()
    }

    /// Cancels the work of every line not printed yet (a resolve, a probe): each is printed
    /// with what it has.
    func cancel() {
        ledger.all().forEach { $0.cancel() }
    }

    /// Waits until every line has been printed.
    func drain() async {
        for task in ledger.all() { await task.value }
        await completion?.value
    }

    /// The latest task of each instance with work still running, and its generation.
    private final class Ledger: Sendable {
        private let state = Mutex<(next: UInt64, tasks: [ServiceInstance: (generation: UInt64, task: Task<Void, Never>)])>((0, [:]))

        func nextGeneration() -> UInt64 {
            state.withLock { state in
                state.next &+= 1
                return state.next
            }
        }

        func record(_ task: Task<Void, Never>, for instance: ServiceInstance, generation: UInt64) {
            state.withLock { $0.tasks[instance] = (generation, task) }
        }

        /// Drops the entry when the task that ended is still the latest for its instance.
        func finished(_ instance: ServiceInstance, generation: UInt64) {
            state.withLock { state in
                if state.tasks[instance]?.generation == generation { state.tasks[instance] = nil }
            }
        }

        func latest(for instance: ServiceInstance) -> Task<Void, Never>? {
            state.withLock { $0.tasks[instance]?.task }
        }

        func all() -> [Task<Void, Never>] {
            state.withLock { $0.tasks.values.map(\.task) }
        }

    }
}
