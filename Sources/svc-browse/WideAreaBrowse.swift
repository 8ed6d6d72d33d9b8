import CommandLineSupport
import DiscoveryCore
import UnicastDNSSD
import WideAreaCommandLine

/// `svc-browse --domain ZONE` for a unicast zone: asks the zone's DNS server itself (the
/// first `nameserver` of resolv.conf, or `--dns-server`) instead of avahi-daemon, whose
/// browse drops instances past one packet and never reports a change. The zone's SOA serial
/// is asked as `ZonePollSchedule` says (every 2 s, every 30 s while the zone keeps changing),
/// and the type's instances read again when it changed; what appeared or went is printed as
/// `added` or `removed`.
enum WideAreaBrowse {
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
/// serial changed and prints what appeared or went; `follow` polls on `ZonePollSchedule`.
struct ZoneWatch {
    let wideArea: WideAreaZone
    private var instances = ZoneInstances()
    private var schedule = ZonePollSchedule()
    private var lastSerial: UInt32?
    private var first = true
    private var notedResolveCap = false
    private var notedChurn = false

    init(_ wideArea: WideAreaZone) { self.wideArea = wideArea }

    /// Reads the zone (when it changed, or new names wait to be resolved) and prints `added`
    /// and `removed` lines.
    /// - Returns: false when the task was cancelled (SIGINT), which ends the DNS exchange at once.
    /// - Throws: the server's error; nothing was printed then.
    mutating func poll(_ options: BrowseOptions) async throws(UnicastDNSSDError) -> Bool {
        let (directory, type, zone) = (wideArea.directory, wideArea.type, wideArea.zone)
        let names: [String]
        do throws(UnicastDNSSDError) {
            // The SOA serial rises with every change: the type is read again only then.
            let serial = try await directory.serial(of: zone)
            let changed = first || serial == nil || serial != lastSerial
            if !first { schedule.note(changed: changed) }
            if !changed && !instances.hasWaiting { return true }
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
        if schedule.churning && !notedChurn {
            Console.note("\(zone) changed at each of the last \(ZonePollSchedule.churnReads) reads; reading it at most every \(ZonePollSchedule.churnInterval.components.seconds) s while it keeps changing")
            notedChurn = true
        }
        let change = instances.read(names, resolving: options.resolve)
        if change.waiting > 0 && !notedResolveCap {
            Console.note("\(zone) lists \(change.added.count + change.waiting) new \(options.type.baseType) instances; resolving \(ZoneInstances.maximumResolvesPerRead) a read, the others are listed as their turn comes")
            notedResolveCap = true
        }
        guard await printAdded(change.added, options) else { return false }
        for name in change.removed {
            Console.out(Self.line("removed", name, nil, options, zone: zone, time: timestampNow()))
        }
        return true
    }

    /// Prints an `added` line for each name, in order, resolving them with `--resolve`
    /// (`concurrentResolves` at a time, the host addresses looked up once for all of them).
    /// - Returns: false when the task was cancelled.
    private func printAdded(_ names: [String], _ options: BrowseOptions) async -> Bool {
        let (directory, type, zone) = (wideArea.directory, wideArea.type, wideArea.zone)
        guard options.resolve else {
            for name in names { Console.out(Self.line("added", name, nil, options, zone: zone, time: timestampNow())) }
            return true
        }
        return await directory.resolve(names, type: type, in: zone) { name, result in
            var resolved: ResolvedInstance?
            switch result {
            case .success(let instance): resolved = instance
            case .failure(let error):
                if error.code == .cancelled || Task.isCancelled { return false }
                Console.note("could not resolve '\(name)': \(error)")
            }
            Console.out(Self.line("added", name, resolved, options, zone: zone, time: timestampNow()))
            return true
        }
    }

    /// Polls until the task is cancelled, waiting as `ZonePollSchedule` says; a failed read
    /// is reported and tried again.
    mutating func follow(_ options: BrowseOptions) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: schedule.nextWait)
            do throws(UnicastDNSSDError) {
                guard try await poll(options) else { return }
            } catch {
                Console.note("could not read \(wideArea.zone): \(error); trying again in \(schedule.nextWait.components.seconds) s")
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
