import CommandLineSupport
import DiscoveryCore
import UnicastDNSSD
import WideAreaCommandLine

/// `svc-browse --domain ZONE` for a unicast zone: asks the zone's DNS server itself (the
/// first `nameserver` of resolv.conf, or `--dns-server`) instead of avahi-daemon, whose
/// browse drops instances past one packet and never reports a change. The zone's SOA serial
/// is asked every 2 s, and the type's instances read again when it changed, as often as
/// `ZonePollSchedule` allows; what appeared or went is printed as `added` or `removed`.
enum WideAreaBrowse {
    /// How long `--once` waits at least (it ends earlier when the zone is read).
    static let minimumWait = Duration.seconds(3)

    static func browse(_ options: BrowseOptions) async throws {
        let started = ContinuousClock.now
        let wideArea = try WideAreaZone(type: options.type, domain: options.domain, dnsServer: options.dnsServer)
        try await SvcBrowse.run(options, minimumWait: minimumWait) { firstBatch in
            var watch = ZoneWatch(wideArea)
            do throws(UnicastDNSSDError) {
                // The first answer decides whether browsing can work at all.
                guard try await watch.poll(options) else { return }
            } catch {
                throw ToolFailure(error)
            }
            if options.once {
                // The first read is in; the names waiting to be resolved get `--once`'s own time.
                firstBatch.end()
                let limit = options.timeout ?? minimumWait + SvcBrowse.onceGrace
                guard var watch = await resolveWaiting(watch, options, until: started + limit) else { return }
                watch.listWaitingUnresolved(options, because: "within --once's time limit (\(limit.secondsText))")
            }
            if options.json { Console.out(JSONValue.object([("event", .string("complete")), ("time", .string(timestampNow()))]).serialized) }
            if options.once { return }
            await watch.follow(options)
        }
    }
}

extension WideAreaBrowse {
    /// Runs `ZoneWatch.resolveWaiting` until `deadline`, when whatever it is doing is cancelled
    /// (a DNS exchange ends at once; the names not listed wait again).
    /// - Returns: the watch, or nil when the browse itself was cancelled (SIGINT).
    static func resolveWaiting(_ watch: ZoneWatch, _ options: BrowseOptions, until deadline: ContinuousClock.Instant) async -> ZoneWatch? {
        let reading = Task {
            var watch = watch
            await watch.resolveWaiting(options, until: deadline)
            return watch
        }
        let timer = Task {
            try await Task.sleep(until: deadline, clock: .continuous)
            reading.cancel()
        }
        let watch = await withTaskCancellationHandler { await reading.value } onCancel: { reading.cancel() }
        timer.cancel()
        return Task.isCancelled ? nil : watch
    }
}

/// One zone's instances of one type as last read: `poll` reads the zone again when it changed
/// (or new names wait to be resolved) and prints what appeared or went; `follow` polls every
/// 2 s, or as `ZonePollSchedule` allows once the zone was read often.
struct ZoneWatch {
    let wideArea: WideAreaZone
    private var instances = ZoneInstances()
    private var schedule = ZonePollSchedule()
    private var lastSerial: UInt32?
    /// The last read's names, by their bytes: what tells a change when the server gives no
    /// serial (a browse domain inside a zone rather than its apex has no SOA of its own).
    private var lastListing: [[UInt8]]?
    private var notedResolveCap = false
    private var notedPacing = false

    init(_ wideArea: WideAreaZone) { self.wideArea = wideArea }

    /// Reads the zone, when `ZonePollSchedule` allows a read and the zone changed or new names
    /// wait to be resolved, and prints `added` and `removed` lines.
    /// - Returns: false when the task was cancelled (SIGINT, or `--once`'s time limit), which
    ///   ends the DNS exchange at once; the names handed out and not listed then wait again.
    /// - Throws: the server's error; nothing was printed then.
    mutating func poll(_ options: BrowseOptions) async throws(UnicastDNSSDError) -> Bool {
        let (directory, type, zone) = (wideArea.directory, wideArea.type, wideArea.zone)
        let names: [String]
        do throws(UnicastDNSSDError) {
            guard schedule.mayRead(at: .now) else { return true }
            // The SOA serial rises with every change: the type is read again only then.
            let serial = try await directory.serial(of: zone)
            let first = lastListing == nil
            if !first, let serial, serial == lastSerial, !instances.hasWaiting { return true }
            let listing = try await directory.browse(type, in: zone)
            let listed = listing.names.map { Array($0.utf8) }
            lastSerial = serial
            if !first, serial == nil, listed == lastListing, !instances.hasWaiting { return true }
            lastListing = listed
            schedule.noteRead(at: .now)
            names = listing.names
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
        if schedule.exhausted && !notedPacing {
            Console.note("\(zone) was read \(ZonePollSchedule.burstReads) times in a row (it kept changing, or new names waited to be resolved); reading it at most once every \(ZonePollSchedule.refillInterval.components.seconds) s while that goes on")
            notedPacing = true
        }
        let change = instances.read(names, resolving: options.resolve)
        if change.waiting > 0 && !notedResolveCap {
            Console.note("\(zone) lists \(change.added.count + change.waiting) new \(options.type.baseType) instances; resolving \(ZoneInstances.maximumResolvesPerRead) a read, the others (the longest waiting first) by the next reads")
            notedResolveCap = true
        }
        let (unlisted, cancelled) = await printAdded(change.added, options)
        instances.putBack(unlisted)
        if cancelled { return false }
        for name in change.removed {
            Console.out(Self.line("removed", name, nil, options, zone: zone, time: timestampNow()))
        }
        return true
    }

    /// Prints an `added` line for each name, in order, resolving them with `--resolve`
    /// (`concurrentResolves` at a time, the host addresses looked up once for all of them).
    /// - Returns: the names not printed because the task was cancelled (then `cancelled`).
    private func printAdded(_ names: [String], _ options: BrowseOptions) async -> (unlisted: [String], cancelled: Bool) {
        let (directory, type, zone) = (wideArea.directory, wideArea.type, wideArea.zone)
        guard options.resolve else {
            for name in names { Console.out(Self.line("added", name, nil, options, zone: zone, time: timestampNow())) }
            return ([], false)
        }
        var printed = 0
        var cancelled = false
        _ = await directory.resolve(names, type: type, in: zone) { name, result in
            var resolved: ResolvedInstance?
            switch result {
            case .success(let instance): resolved = instance
            case .failure(let error):
                if error.code == .cancelled || Task.isCancelled {
                    cancelled = true
                    return false
                }
                Console.note("could not resolve '\(name)': \(error)")
            }
            Console.out(Self.line("added", name, resolved, options, zone: zone, time: timestampNow()))
            printed += 1
            return true
        }
        return (Array(names.dropFirst(printed)), cancelled)
    }

    /// `--once`: reads the zone again, as `ZonePollSchedule` allows, while new names wait to be
    /// resolved, the next read can begin before `deadline` and the task is not cancelled.
    mutating func resolveWaiting(_ options: BrowseOptions, until deadline: ContinuousClock.Instant) async {
        while instances.hasWaiting {
            let wait = schedule.nextWait(at: .now)
            guard ContinuousClock.now + wait < deadline else { return }
            do { try await Task.sleep(for: wait) } catch { return }
            do throws(UnicastDNSSDError) {
                guard try await poll(options) else { return }
            } catch {
                Console.note("could not read \(wideArea.zone) again to resolve the instances still waiting: \(error)")
                return
            }
        }
    }

    /// Lists the names still waiting to be resolved without host and addresses (the browse
    /// ends), and says so once.
    mutating func listWaitingUnresolved(_ options: BrowseOptions, because reason: String) {
        let names = instances.takeWaiting()
        guard !names.isEmpty else { return }
        Console.note("\(names.count) \(options.type.baseType) instances of \(wideArea.zone) were not resolved \(reason); they are listed without host and addresses")
        for name in names {
            Console.out(Self.line("added", name, nil, options, zone: wideArea.zone, time: timestampNow()))
        }
    }

    /// Polls until the task is cancelled, waiting as `ZonePollSchedule` says; a failed read
    /// is reported and tried again.
    mutating func follow(_ options: BrowseOptions) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: schedule.nextWait(at: .now))
            do throws(UnicastDNSSDError) {
                guard try await poll(options) else { return }
            } catch {
                Console.note("could not read \(wideArea.zone): \(error); trying again in \(schedule.nextWait(at: .now).components.seconds) s")
            }
        }
    }

    /// `added "name" _p2pipp._tcp lab.test. at host.lab.test.:port [addresses] txt: "k=v"`,
    /// or the JSON object with the keys of an mDNS browse (no `interfaces`: a zone has none).
    static func line(_ event: String, _ name: String, _ resolved: ResolvedInstance?, _ options: BrowseOptions, zone: DNSName, time: String) -> String {
        let txtBytes = resolved.map { $0.txt.flatMap { [UInt8(truncatingIfNeeded: $0.count)] + $0 } } ?? []
        if !options.json {
            var text = "\(event) \(TerminalSafe.quoted(name)) \(options.type.baseType) \(zone)"
            if let resolved {
                text += " at \(resolved.host):\(resolved.port) [" + resolved.addresses.map(\.description).joined(separator: ", ") + "]"
                let items = resolved.txt.filter { !$0.isEmpty }
                if !items.isEmpty { text += " txt: " + items.map { TerminalSafe.quoted(String(decoding: $0, as: UTF8.self)) }.joined(separator: " ") }
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
