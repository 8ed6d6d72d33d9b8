import CommandLineSupport
import DNSSD
import DiscoveryCore
import TransportCore

@main
struct SvcBrowse {
    static func main() async {
        await ToolMain.run(BrowseOptions.spec, validate: BrowseOptions.init) { options in
            try await browse(options)
            return .success
        }
    }

    /// Prints events until `--once` has its first batch, `--timeout` passes, or a signal.
    static func browse(_ options: BrowseOptions) async throws {
        let browser = ServiceBrowser(type: options.type, domain: options.domain)
        let events = try browser.start { status in
            switch status {
            case .lost(let error): Console.note("\(error.message); browsing resumes when it is back")
            case .restored: Console.note("avahi-daemon is reachable again; browsing resumed")
            }
        }
        // Lines are made concurrently (resolving takes a round trip) but printed in event order.
        let (lines, pending) = AsyncStream<Task<String?, Never>>.makeStream()
        let printer = Task {
            for await line in lines {
                if let text = await line.value { Console.out(text) }
            }
        }
        let work = Task {
            defer { pending.finish() }
            for try await event in events {
                let time = timestampNow()
                pending.yield(Task { await line(for: event, at: time, options) })
                if event == .completeForNow && options.once { return }
            }
        }
        let signals = TerminationSignals(queue: .main) { _ in work.cancel() }
        if let timeout = options.timeout {
            Task {
                try await Task.sleep(for: timeout)
                work.cancel()
            }
        }
        let result = await work.result
        await printer.value
        withExtendedLifetime(signals) {}
        try result.get()
    }

    static func line(for event: BrowseEvent, at time: String, _ options: BrowseOptions) async -> String? {
        switch event {
        case .added(let instance, let interfaces):
            var resolution: Result<(ResolvedService, [SocketEndpoint]), any Error>?
            if options.resolve {
                resolution = await Result {
                    let resolved = try await instance.resolve(interfaceIndex: interfaces.first?.index ?? 0, timeout: .seconds(3))
                    return (resolved, try await resolved.lookUpAddresses(timeout: .seconds(3)))
                }
                if case .failure(let error) = resolution {
                    Console.note("could not resolve '\(TerminalSafe.escape(instance.name))': \(error)")
                }
            }
            return BrowseOutput.format("added", instance, interfaces, resolution.flatMap { try? $0.get() }, time: time, json: options.json)
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
