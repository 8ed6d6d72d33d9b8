import CommandLineSupport
import DNSSD
import DiscoveryCore
import TransportCore
import TransportPOSIX

@main
struct SvcBrowse {
    static func main() async {
        await ToolMain.run(BrowseOptions.spec, validate: BrowseOptions.init, json: { $0.json }) { options in
            if options.allTypes { try await browseAllTypes(options) } else { try await browse(options) }
            return .success
        }
    }

    /// Prints events until `--once` has its first batch, `--timeout` passes, a signal, or
    /// the reader of stdout goes away.
    static func browse(_ options: BrowseOptions) async throws {
        let browser = ServiceBrowser(type: options.type, domain: options.domain, interface: options.interface)
        let events = try browser.start(onDaemonStatus: noteDaemonStatus)
        try await run(options) {
            var printer = EventPrinter()
            for try await event in events {
                printer.print(event, at: timestampNow()) { event, time in await line(for: event, at: time, options) }
                if event == .completeForNow && options.once { break }
            }
            await printer.drain()
        }
    }

    static func noteDaemonStatus(_ status: DaemonStatus) {
        switch status {
        case .lost(let error): Console.note("\(error.lostMessage); browsing resumes as soon as it is back")
        case .restored: Console.note("avahi-daemon is back; browsing resumed")
        }
    }

    /// Runs `body` until it returns, `--timeout` passes, a signal, or the reader of stdout
    /// goes away.
    static func run(_ options: BrowseOptions, _ body: @escaping @Sendable () async throws -> Void) async throws {
        let work = Task { try await body() }
        let signals = TerminationSignals(queue: .main) { _ in work.cancel() }
        // `svc-browse | head -1`: once the reader is gone there is nobody to tell; stop, status 0.
        Console.whenStandardOutputCloses { work.cancel() }
        if let timeout = options.timeout {
            Task {
                try await Task.sleep(for: timeout)
                work.cancel()
            }
        }
        let result = await work.result
        withExtendedLifetime(signals) {}
        try result.get()
    }

    static func line(for event: BrowseEvent, at time: String, _ options: BrowseOptions) async -> String? {
        switch event {
        case .added(let instance, let interfaces):
            var resolution: Result<(ResolvedService, [SocketEndpoint]), any Error>?
            var answering: Result<Void, any Error>?
            if options.resolve {
                resolution = await Result {
                    let resolved = try await instance.resolve(interfaceIndex: interfaces.first?.index ?? 0, timeout: .seconds(3))
                    return (resolved, try await resolved.lookUpAddresses(timeout: .seconds(3)))
                }
                if case .failure(let error) = resolution, !(error is CancellationError) {
                    Console.note("could not resolve '\(instance.name)': \(error)")
                }
            }
            if options.verify, case .success(let (resolved, endpoints)) = resolution {
                // A host that left without a goodbye stays in caches; only a connection tells.
                // A room is asked for its HELLO (quietly: see RoomProbe); other types only connect.
                answering = await Result {
                    if instance.type.baseType == ServiceType.p2pipp.baseType {
                        try await RoomProbe.check(endpoints, interface: options.interface?.name, announcedKey: resolved.txt?.string(forKey: "key"),
                                                  timeout: .seconds(2))
                    } else {
                        let (socket, _) = try await TCPConnector.connect(to: endpoints, interface: options.interface?.name, timeout: .seconds(2))
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

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// Prints events as soon as their lines are ready (resolving takes a round trip), in order
/// for each instance: an instance's `removed` line never comes before its `added` line, and
/// cancels a resolve still running for it. `complete` comes after every line before it.
struct EventPrinter {
    private var lastTask: [ServiceInstance: Task<Void, Never>] = [:]
    private var completion: Task<Void, Never>?

    mutating func print(_ event: BrowseEvent, at time: String,
                        line: @escaping @Sendable (BrowseEvent, String) async -> String?) {
        let instance: ServiceInstance?
        let predecessors: [Task<Void, Never>]
        switch event {
        case .added(let added, _), .interfacesChanged(let added, _):
            instance = added
            predecessors = lastTask[added].map { [$0] } ?? []
        case .removed(let removed):
            instance = removed
            predecessors = lastTask[removed].map { [$0] } ?? []
            predecessors.forEach { $0.cancel() } // its resolve is moot now
        case .completeForNow:
            instance = nil
            predecessors = Array(lastTask.values)
        }
        let task = Task {
            for predecessor in predecessors { await predecessor.value }
            if let text = await line(event, time) { Console.out(text) }
        }
        if let instance { lastTask[instance] = task } else { completion = task }
    }

    /// Waits until every line has been printed.
    func drain() async {
        for task in lastTask.values { await task.value }
        await completion?.value
    }
}
