import CommandLineSupport
import DiscoveryCore
import UnicastDNSSD

/// `svc-browse --domain ZONE` for a unicast zone: asks the zone's DNS server itself (the
/// first `nameserver` of resolv.conf, or `--dns-server`) instead of avahi-daemon, whose
/// browse drops instances past one packet and never reports a change. The zone's SOA serial
/// is asked every `pollInterval`, and the type's instances read again when it changed; what
/// appeared or went is printed as `added` or `removed`.
enum WideAreaBrowse {
    static let pollInterval: Duration = .seconds(2)

    static func browse(_ options: BrowseOptions) async throws {
        let directory: UnicastServiceDirectory<LDNSServer>
        let type: UnicastDNSSD.ServiceType
        let zone: DNSName
        do throws(UnicastDNSSDError) {
            let server = if let given = options.dnsServer { given } else { try ResolvConf.firstServer() }
            directory = UnicastServiceDirectory(server: LDNSServer(address: server, key: nil))
            type = try UnicastDNSSD.ServiceType(options.type.baseType)
            zone = try DNSName(dotted: options.domain.name)
        } catch {
            throw failure(error)
        }
        try await SvcBrowse.run(options, minimumWait: .seconds(3)) { firstBatch in
            var known = Set<String>()
            var first = true
            var lastSerial: UInt32?
            while !Task.isCancelled {
                let names: [String]
                do throws(UnicastDNSSDError) {
                    // The SOA serial rises with every change: the type is read again only then.
                    let serial = try await directory.serial(of: zone)
                    if !first, let serial, serial == lastSerial {
                        try? await Task.sleep(for: pollInterval)
                        continue
                    }
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
                    // SIGINT cancels the task, which ends the DNS exchange at once.
                    if error.code == .cancelled || Task.isCancelled { return }
                    // The first answer decides whether browsing can work at all.
                    if first { throw failure(error) }
                    Console.note("could not read \(zone): \(error); trying again in \(pollInterval.components.seconds) s")
                    try? await Task.sleep(for: pollInterval)
                    continue
                }
                for name in names where !known.contains(name) {
                    var resolved: ResolvedInstance?
                    if options.resolve {
                        do {
                            resolved = try await directory.resolve(name, type: type, in: zone)
                        } catch {
                            if (error as? UnicastDNSSDError)?.code == .cancelled || Task.isCancelled { return }
                            Console.note("could not resolve '\(name)': \(error)")
                        }
                    }
                    Console.out(line("added", name, resolved, options, time: timestampNow()))
                }
                for name in known.subtracting(names).sorted() {
                    Console.out(line("removed", name, nil, options, time: timestampNow()))
                }
                known = Set(names)
                if first {
                    first = false
                    if options.json { Console.out(JSONValue.object([("event", .string("complete")), ("time", .string(timestampNow()))]).serialized) }
                    if options.once {
                        firstBatch.end()
                        return
                    }
                }
                try? await Task.sleep(for: pollInterval)
            }
        }
    }

    /// `added "name" _p2pipp._tcp lab.test. at host.lab.test.:port [addresses] txt: "k=v"`,
    /// or the JSON object with the keys of an mDNS browse (no `interfaces`: a zone has none).
    static func line(_ event: String, _ name: String, _ resolved: ResolvedInstance?, _ options: BrowseOptions, time: String) -> String {
        let txtBytes = resolved.map { $0.txt.flatMap { [UInt8(truncatingIfNeeded: $0.count)] + $0 } } ?? []
        if !options.json {
            var text = "\(event) \"\(name)\" \(options.type.baseType) \(options.domain)"
            if let resolved {
                text += " at \(resolved.host):\(resolved.port) [" + resolved.addresses.map(\.description).joined(separator: ", ") + "]"
                let items = resolved.txt.filter { !$0.isEmpty }
                if !items.isEmpty { text += " txt: " + items.map { "\"\(String(decoding: $0, as: UTF8.self))\"" }.joined(separator: " ") }
            }
            return text
        }
        var members: [(String, JSONValue)] = [
            ("event", .string(event)), ("time", .string(time)), ("name", .string(name)),
            ("type", .string(options.type.baseType)), ("domain", .string(options.domain.name)),
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

    static func failure(_ error: UnicastDNSSDError) -> ToolFailure {
        let code: ExitCode = switch error.code {
        case .noSuchZone, .invalidName, .refused: .configuration
        case .unreachable: .unavailable
        case .timeout: .temporaryFailure
        default: .protocolError
        }
        return ToolFailure(code, error.description)
    }
}
