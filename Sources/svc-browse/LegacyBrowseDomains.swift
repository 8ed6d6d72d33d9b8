import CommandLineSupport
import UnicastDNSSD
import WideAreaCommandLine

/// The network's legacy browse domains (`lb._dns-sd._udp` PTRs, RFC 6763 section 11), which a
/// plain `svc-browse` browses as well as local.: found once at the start, read once before the
/// first batch is complete, then followed like `--domain ZONE` until the browse ends.
///
/// Quiet when the network recommends nothing or its DNS server does not answer (most networks
/// do not take part); a recommended domain that cannot be read is reported and left out.
final class LegacyBrowseDomains: Sendable {
    /// The most legacy browse domains browsed.
    static let maximumDomains = 8
    /// Seconds the discovery's exchange may take: short, since most networks recommend nothing
    /// and `--once` waits for it.
    static let discoveryTimeout = 1

    /// Discovers the domains and reads each once; its value is what `following` goes on with.
    private let firstRead: Task<[ZoneWatch], Never>
    private let following: Task<Void, Never>

    /// Starts discovering and browsing in the background, or returns nil when there is nobody
    /// to ask: resolv.conf names no DNS server, or no route leads to it (a namespace or host
    /// with only its own subnet), which is checked at once without sending anything, so that
    /// `--once` does not spend the work of a lookup that cannot be answered.
    static func start(_ options: BrowseOptions) -> LegacyBrowseDomains? {
        guard let server = try? ResolvConf.firstServer(), server.hasRoute else { return nil }
        return LegacyBrowseDomains(options, server: server)
    }

    private init(_ options: BrowseOptions, server: IPAddress) {
        let firstRead = Task { await Self.discoverAndRead(options, server: server) }
        self.firstRead = firstRead
        following = Task {
            let watches = await firstRead.value
            guard !options.once else { return }
            await withTaskGroup(of: Void.self) { group in
                for watch in watches {
                    group.addTask {
                        var watch = watch
                        await watch.follow(options)
                    }
                }
            }
        }
    }

    /// How long the first batch waits for the legacy browse domains once the link's own batch
    /// is complete: a DNS server on the network answers within a few milliseconds, one across
    /// the internet within a round trip or two, while one that drops the queries would
    /// otherwise hold every `--once` for the whole `discoveryTimeout`.
    static let firstBatchGrace = Duration.milliseconds(250)

    /// Returns once every legacy browse domain was read (or given up) for the first time, or
    /// `firstBatchGrace` after the call, whichever comes first; at once when the calling task
    /// is cancelled (SIGINT, `--timeout`): the reads in flight are cancelled then, which ends
    /// their DNS exchanges. Reads still running after the grace go on; a live browse lists
    /// what they find when they end, `--once` does not wait for them.
    func firstBatch() async {
        let firstRead = firstRead
        // Whichever ends first finishes the stream; waiting on a task's value cannot be cancelled,
        // so its waiter is left to end with the reads (it holds nothing else).
        let (ended, end) = AsyncStream<Void>.makeStream()
        Task { _ = await firstRead.value; end.finish() }
        let grace = Task { try? await Task.sleep(for: Self.firstBatchGrace); end.finish() }
        await withTaskCancellationHandler {
            for await _ in ended {}
            grace.cancel()
        } onCancel: {
            firstRead.cancel()
        }
    }

    /// Stops browsing (the DNS exchanges in flight end at once).
    func cancel() {
        firstRead.cancel()
        following.cancel()
    }

    private static func discoverAndRead(_ options: BrowseOptions, server: IPAddress) async -> [ZoneWatch] {
        guard let type = try? UnicastDNSSD.ServiceType(options.type.baseType),
              let found = try? await NetworkDomains.discover([.legacyBrowse], server: server, timeout: discoveryTimeout) else { return [] }
        var zones: [DNSName] = []
        // `.local` names are multicast DNS's: never asked of a unicast DNS server (RFC 6762 section 3).
        for domain in found.found.domains.map(\.domain) where !domain.isLinkLocal && !zones.contains(where: { $0.sameName(as: domain) }) {
            guard zones.count < maximumDomains else {
                Console.note("the network recommends more than \(maximumDomains) legacy browse domains; only the first \(maximumDomains) are browsed")
                break
            }
            zones.append(domain)
        }
        let directory = UnicastServiceDirectory(server: LDNSServer(address: found.server, key: nil))
        return await withTaskGroup(of: ZoneWatch?.self) { group in
            for zone in zones {
                group.addTask {
                    var watch = ZoneWatch(WideAreaZone(directory: directory, type: type, zone: zone))
                    do throws(UnicastDNSSDError) {
                        guard try await watch.poll(options) else { return nil }
                        // `--once` reads each domain once: what waits to be resolved is listed as it is.
                        if options.once { watch.listWaitingUnresolved(options, because: "in the one read --once makes of a legacy browse domain") }
                        return watch
                    } catch {
                        Console.note("not browsing \(zone), a legacy browse domain of this network: \(error)")
                        return nil
                    }
                }
            }
            var watches: [ZoneWatch] = []
            for await watch in group { if let watch { watches.append(watch) } }
            return watches
        }
    }
}
