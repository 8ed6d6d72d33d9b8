import CommandLineSupport
import DNSSD
import DiscoveryCore

/// What reaches `--all`'s loop: an event of the type enumeration, or of one type's browse.
private enum AllTypesInput: Sendable {
    case type(ServiceTypeEvent)
    case instance(BrowseEvent, of: ServiceType)
    /// One type's browse stopped (it failed; the error was noted).
    case browseEnded(ServiceType)
    /// The type enumeration failed: `--all` ends with this error.
    case typesFailed(any Error)
}

extension SvcBrowse {
    /// How long `--all` waits at least for answers before a first batch can end: RFC 6762 §6
    /// lets a responder delay a shared answer by 20-120 ms, and by up to 500 ms more to
    /// aggregate answers (python-zeroconf does), which the 350 ms of one type's browse misses.
    static let allTypesMinimumWait = Duration.milliseconds(700)

    /// `--all`: enumerates the service types (`ServiceTypeBrowser`) and browses each one,
    /// within `AllTypesState`'s bounds, printing type and instance events until `--once` has
    /// its first batch, `--timeout` passes, a signal, or the reader of stdout goes away.
    static func browseAllTypes(_ options: BrowseOptions) async throws {
        let probes = try probeLoop(options)
        defer { probes?.shutdown() }
        try await run(options, minimumWait: allTypesMinimumWait) { firstBatch in
            guard let types = try await firstBatch.startingBrowse("listing the service types in \(options.domain)", {
                try await ServiceTypeBrowser(domain: options.domain, interface: options.interface, minimumWait: allTypesMinimumWait)
                    .start(onDaemonStatus: noteDaemonStatus)
            }) else { return }
            let (inputs, input) = AsyncStream<AllTypesInput>.makeStream()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        for try await event in types { input.yield(.type(event)) }
                    } catch {
                        input.yield(.typesFailed(error))
                    }
                }
                var state = AllTypesState()
                var printer = EventPrinter()
                // Each type's browse, so that a type that leaves frees its daemon connection.
                var browses: [ServiceType: Task<Void, Never>] = [:]
                defer { browses.values.forEach { $0.cancel() } }
                loop: for await next in inputs {
                    let actions: [AllTypesState.Action]
                    switch next {
                    case .type(let event): actions = state.typeEvent(event)
                    case .instance(let event, let type): actions = state.instanceEvent(event, of: type)
                    case .browseEnded(let type): actions = state.browseEnded(type)
                    case .typesFailed(let error): throw error
                    }
                    for action in actions {
                        switch action {
                        case .browse(let type):
                            do {
                                let events = try await ServiceBrowser(type: type, domain: options.domain, interface: options.interface,
                                                                      minimumWait: allTypesMinimumWait).start()
                                browses[type] = Task {
                                    do {
                                        for try await event in events { input.yield(.instance(event, of: type)) }
                                    } catch {
                                        Console.note("stopped browsing \(type.baseType): \(error)")
                                        input.yield(.browseEnded(type))
                                    }
                                }
                            } catch is CancellationError {
                                // Stopped (--timeout, a signal) while the daemon had not taken it.
                                input.yield(.browseEnded(type))
                            } catch {
                                Console.note("cannot browse \(type.baseType): \(error)")
                                input.yield(.browseEnded(type))
                            }
                        case .stopBrowsing(let type):
                            browses.removeValue(forKey: type)?.cancel()
                        case .reportType(let event):
                            if let text = BrowseOutput.typeLine(event, domain: options.domain, at: timestampNow(), json: options.json) {
                                Console.out(text)
                            }
                        case .reportInstance(let event):
                            printer.print(event, at: timestampNow()) { event, time in await line(for: event, at: time, options, probes: probes) }
                        case .typeLimitReached(let type):
                            Console.note("\(type.baseType) and later types are not browsed yet: \(state.maximumTypes) types are browsed already; up to \(state.maximumTypes) more wait and are browsed, oldest first, as types leave")
                        case .instanceLimitReached(let instance):
                            Console.note("\(TerminalSafe.quoted(instance.name)) (\(instance.type.baseType)) and later instances are not listed yet: \(state.maximumInstances) are listed already; up to \(state.maximumInstances) more wait and are listed, oldest first, as others leave")
                        case .completeForNow:
                            printer.print(.completeForNow, at: timestampNow()) { event, time in await line(for: event, at: time, options, probes: probes) }
                            if options.once {
                                firstBatch.end()
                                break loop
                            }
                        }
                    }
                }
                await printer.drain()
                group.cancelAll()
            }
        }
    }
}
