import CommandLineSupport
import DNSSD
import DiscoveryCore
import UnicastDNSSD
import WideAreaCommandLine

extension SvcConnect {
    /// The instance name to join: the name as given when a service has it, else the name it
    /// stands for as svc-browse shows names (`ConnectOptions.unescapedName`) when a service
    /// has that one, else the name as given (its failure then lists the names seen).
    ///
    /// Only a name that reads as another name costs a look: over mDNS a browse until the
    /// daemon has told what it knows (or the name as given is seen), at most `namesSeenBound`
    /// or --timeout, whichever is shorter; in a unicast zone a lookup of each name on its
    /// server, within --timeout.
    static func matchedName(_ options: ConnectOptions) async -> String {
        guard let unescaped = options.unescapedName else { return options.name }
        guard options.nameAsGivenIsValid else { return unescaped }
        let given = options.name
        if options.isUnicast {
            guard let zone = try? WideAreaZone(type: options.type, domain: options.domain, dnsServer: options.dnsServer) else { return given }
            let deadline = ContinuousClock.now + options.timeout
            for name in [given, unescaped] {
                let found = try? await WideAreaConnector.withDeadline(deadline, zone: zone.zone) { () async throws(UnicastDNSSDError) -> Bool in
                    try await zone.directory.resolve(name, type: zone.type, in: zone.zone) != nil
                }
                if found == true { return name }
            }
            return given
        }
        // Only the two names are kept: a host announcing thousands of others costs no memory.
        let seen = await boundedBrowse(options, bound: min(namesSeenBound, options.timeout),
                                       keep: { $0 == given || $0 == unescaped }, stop: { $0 == given }) ?? []
        return chooseName(given: given, unescaped: unescaped, seen: seen)
    }

    /// The name as given when it was seen, else the unescaped one when that was, else the
    /// name as given.
    static func chooseName(given: String, unescaped: String, seen: [String]) -> String {
        if seen.contains(given) { return given }
        return seen.contains(unescaped) ? unescaped : given
    }

    /// The names (those `keep` is true for) a browse of `options`' type, domain and interface
    /// saw until the daemon told all it knows for now, `stop` was true for a name, or `bound`
    /// passed; nil when the
    /// browse could not start. Opening a browse blocks on D-Bus round trips, up to D-Bus's
    /// 25 s each when the daemon hangs (a review: --timeout 3 took 53 s): what is not seen
    /// within the bound is left out.
    static func boundedBrowse(_ options: ConnectOptions, bound: Duration,
                              keep: @escaping @Sendable (String) -> Bool = { _ in true },
                              stop: @escaping @Sendable (String) -> Bool = { _ in false }) async -> [String]? {
        let (listing, continuation) = AsyncStream<[String]?>.makeStream()
        let browsing = Task.detached {
            continuation.yield(await browseNames(options, keep: keep, stop: stop))
            continuation.finish()
        }
        let timer = Task {
            try? await Task.sleep(for: bound)
            continuation.finish()
        }
        defer { timer.cancel() }
        for await names in listing { return names }
        browsing.cancel()
        return nil
    }

    private static func browseNames(_ options: ConnectOptions, keep: @Sendable (String) -> Bool,
                                    stop: @Sendable (String) -> Bool) async -> [String]? {
        guard let events = try? await ServiceBrowser(type: options.type, domain: options.domain, interface: options.interface).start() else { return nil }
        var names: [String] = []
        do {
            for try await event in events {
                if case .added(let instance, _) = event {
                    if keep(instance.name) { names.append(instance.name) }
                    if stop(instance.name) { break }
                }
                if event == .completeForNow { break }
            }
        } catch {}
        return names
    }
}
