import CommandLineSupport
import DiscoveryCore
import UnicastDNSSD
import WideAreaCommandLine

/// `svc-browse --domain ZONE` for a unicast zone: asks the zone's DNS server itself (the
/// first `nameserver` of resolv.conf, or `--dns-server`) instead of avahi-daemon, whose
/// browse drops instances past one packet and never reports a change. The zone's SOA serial
/// is asked every `pollInterval`, and the type's instances read again when it changed; what
/// appeared or went is printed as `added` or `removed`.
enum WideAreaBrowse {
    static let pollInterval: Duration = .seconds(2)

    static func browse(_ options: BrowseOptions) async throws {
        let wideArea = try WideAreaZone(type: options.type, domain: options.domain, dnsServer: options.dnsServer)
        try await SvcBrowse.run(options, minimumWait: .seconds(3)) { firstBatch in
            var watch = ZoneWatch(wideArea)
            do throws(UnicastDNSSDError) {
                // The first answer decides whether browsing can work at all.
                guard try await watch.poll(options) else { return }
            } catch {
                throw ToolFailure(error)
            }
            if options.json { Console.out(JSONValue.object([("event", .string("complete")), ("time", .string(timestampNow()))]).serialized) }
            if options.once {
                firstBatch.end()
                return
            }
            await watch.follow(options)
        }
    }
}

/// One zone's instances of one type as last read: `poll` reads the zone again when its SOA
/// serial changed and prints what appeared or went.
struct ZoneWatch {
    /// The most instances resolved in one poll (with `--resolve`): a zone whose serial changes
    /// on every read and lists new names each time would otherwise set off thousands of
    /// queries per poll. The rest are listed by the next polls, `maximumResolvesPerPoll` each.
    static let maximumResolvesPerPoll = 64
    /// How many resolves of one poll run at once; each keeps its exchanges' deadline, so a
    /// server that never answers holds a poll for at most a few deadlines per batch.
    static let concurrentResolves = 4

    let wideArea: WideAreaZone
    private var known = Set<String>()
    /// Names the last read listed that were not resolved yet (past `maximumResolvesPerPoll`).
    private var pending: [String] = []
    private var lastSerial: UInt32?
    private var first = true
    private var notedResolveCap = false

    init(_ wideArea: WideAreaZone) { self.wideArea = wideArea }

    /// Reads the zone (when it changed) and prints `added` and `removed` lines.
    /// - Returns: false when the task was cancelled (SIGINT), which ends the DNS exchange at once.
    /// - Throws: the server's error; nothing was printed then.
    mutating func poll(_ options: BrowseOptions) async throws(UnicastDNSSDError) -> Bool {
        let (directory, type, zone) = (wideArea.directory, wideArea.type, wideArea.zone)
        let names: [String]
        do throws(UnicastDNSSDError) {
            // The SOA serial rises with every change: the type is read again only then.
            let serial = try await directory.serial(of: zone)
            if !first, pending.isEmpty, let serial, serial == lastSerial { return true }
            let listing = try await directory.browse(type, in: zone)
            names = listing.names
            lastSerial = serial
            if listing.cut > 0 {
                Console.note("\(zone) lists \(listing.cut) more \(options.type.baseType) instances than the \(UnicastServiceDirectory<LDNSServer>.maximumInstances) shown (the first in byte order); the list was cut")
            }
            if listing.notUTF8 > 0 {
                Console.note("skipped \(listing.notUTF8) instance names in \(zone) that are not valid UTF-8")
            }
        } catch {
            if error.code == .cancelled || Task.isCancelled { return false }
            throw error
        }
        first = false
        var added = names.filter { !known.contains($0) }
        pending = []
        if options.resolve && added.count > Self.maximumResolvesPerPoll {
            pending = Array(added.dropFirst(Self.maximumResolvesPerPoll))
            added = Array(added.prefix(Self.maximumResolvesPerPoll))
            if !notedResolveCap { Console.note("\(zone) lists \(added.count + pending.count) new \(options.type.baseType) instances; resolving \(Self.maximumResolvesPerPoll) every \(WideAreaBrowse.pollInterval.components.seconds) s, the others are listed as their turn comes") }
            notedResolveCap = true
        }
        guard await printAdded(added, options) else { return false }
        let listed = Set(names).subtracting(pending)
        for name in known.subtracting(listed).sorted() {
            Console.out(Self.line("removed", name, nil, options, zone: zone, time: timestampNow()))
        }
        known = listed
        return true
    }

    /// Prints an `added` line for each name, in order, resolving `concurrentResolves` at a
    /// time with `--resolve` (the host addresses looked up once for all of them).
    /// - Returns: false when the task was cancelled.
    private func printAdded(_ names: [String], _ options: BrowseOptions) async -> Bool {
        let (directory, type, zone) = (wideArea.directory, wideArea.type, wideArea.zone)
        guard options.resolve else {
            for name in names { Console.out(Self.line("added", name, nil, options, zone: zone, time: timestampNow())) }
            return true
        }
        let cache = HostAddressCache()
        var start = 0
        while start < names.count {
            let batch = Array(names[start..<min(start + Self.concurrentResolves, names.count)])
            start += batch.count
            let results = await withTaskGroup(of: (Int, Result<ResolvedInstance?, UnicastDNSSDError>).self) { group in
                for (index, name) in batch.enumerated() {
                    group.addTask {
                        do throws(UnicastDNSSDError) {
                            return (index, .success(try await directory.resolve(name, type: type, in: zone, cache: cache)))
                        } catch {
                            return (index, .failure(error))
                        }
                    }
                }
                var results = [Result<ResolvedInstance?, UnicastDNSSDError>](repeating: .success(nil), count: batch.count)
                for await (index, result) in group { results[index] = result }
                return results
            }
            for (name, result) in zip(batch, results) {
                var resolved: ResolvedInstance?
                switch result {
                case .success(let instance): resolved = instance
                case .failure(let error):
                    if error.code == .cancelled || Task.isCancelled { return false }
                    Console.note("could not resolve '\(name)': \(error)")
                }
                Console.out(Self.line("added", name, resolved, options, zone: zone, time: timestampNow()))
            }
        }
        return true
    }

    /// Polls every `WideAreaBrowse.pollInterval` until the task is cancelled; a failed read
    /// is reported and tried again.
    mutating func follow(_ options: BrowseOptions) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: WideAreaBrowse.pollInterval)
            do throws(UnicastDNSSDError) {
                guard try await poll(options) else { return }
            } catch {
                Console.note("could not read \(wideArea.zone): \(error); trying again in \(WideAreaBrowse.pollInterval.components.seconds) s")
            }
        }
    }

    /// `added "name" _p2pipp._tcp lab.test. at host.lab.test.:port [addresses] txt: "k=v"`,
    /// or the JSON object with the keys of an mDNS browse (no `interfaces`: a zone has none).
    static func line(_ event: String, _ name: String, _ resolved: ResolvedInstance?, _ options: BrowseOptions, zone: DNSName, time: String) -> String {
        let txtBytes = resolved.map { $0.txt.flatMap { [UInt8(truncatingIfNeeded: $0.count)] + $0 } } ?? []
        if !options.json {
            var text = "\(event) \(BrowseOutput.quoted(name)) \(options.type.baseType) \(zone)"
            if let resolved {
                text += " at \(resolved.host):\(resolved.port) [" + resolved.addresses.map(\.description).joined(separator: ", ") + "]"
                let items = resolved.txt.filter { !$0.isEmpty }
                if !items.isEmpty { text += " txt: " + items.map { "\"\(String(decoding: $0, as: UTF8.self))\"" }.joined(separator: " ") }
            }
            return text
        }
        var members: [(String, JSONValue)] = [
            ("event", .string(event)), ("time", .string(time)), ("name", .string(name)),
            ("type", .string(options.type.baseType)), ("domain", .string(zone.description)),
        ]
        if let resolved {
            members += [
                ("host", .string(resolved.host.description)), ("port", .integer(Int(resolved.port))),
                ("addresses", .array(resolved.addresses.map { .string($0.description) })),
                ("txt", (try? TXTRecord(decoding: txtBytes)).map(BrowseOutput.txtObject) ?? .null),
                ("txt_raw", .string(txtBytes.map(BrowseOutput.hexByte).joined())),
            ]
        }
        return JSONValue.object(members).serialized
    }
}
