// swift-tools-version:6.0
import PackageDescription

/// A state-level fuzz target: one file of Fuzz/targets, the others left out (the parser targets
/// there are built by Scripts/fuzz with swiftc).
func stateFuzzTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    let files = ["cli", "frames", "room", "sessions", "txt", "room-code", "dns-reply", "terminal-safe", "room-server", "room-client", "file-transfer", "secure-link"].map { $0 + ".swift" }
    return .executableTarget(name: "fuzz-" + name, dependencies: dependencies, path: "Fuzz/targets",
                             exclude: files.filter { $0 != name + ".swift" }, sources: [name + ".swift"])
}

/// How the four tools link the Swift runtime: statically (libswiftCore, _Concurrency, Dispatch,
/// Synchronization and the rest from the toolchain's swift_static), in debug and release builds
/// alike, so the tests run what Scripts/bench measures and Scripts/install installs. Start-up
/// skips loading and binding ten shared Swift libraries and an idle tool maps only the runtime
/// code it uses (docs/BENCHMARKS.md, row 10: -1.4 MB RSS, -20% CPU for `--help`), and an
/// installed tool needs no Swift library at run time; each binary is ~12.6 MB larger. The C
/// libraries (Avahi, OpenSSL, ldns, libsodium) stay shared. Scripts/check-links keeps it so.
let toolLinkerSettings: [LinkerSetting] = [.unsafeFlags(["-static-stdlib"])]

let package = Package(
    name: "svc",
    products: [
        .library(name: "DiscoveryCore", targets: ["DiscoveryCore"]),
        .library(name: "DNSSD", targets: ["DNSSD"]),
        .library(name: "TransportCore", targets: ["TransportCore"]),
        .library(name: "TransportPOSIX", targets: ["TransportPOSIX"]),
        .library(name: "SafeText", targets: ["SafeText"]),
        .library(name: "MessagingCore", targets: ["MessagingCore"]),
        .library(name: "Messaging", targets: ["Messaging"]),
        .library(name: "SecureTransport", targets: ["SecureTransport"]),
        .library(name: "RoomCodeExchange", targets: ["RoomCodeExchange"]),
        .executable(name: "svc-publish", targets: ["svc-publish"]),
        .executable(name: "svc-browse", targets: ["svc-browse"]),
        .executable(name: "svc-connect", targets: ["svc-connect"]),
        .executable(name: "svc-doctor", targets: ["svc-doctor"]),
    ],
    targets: [
        // Avahi's Bonjour compatibility library (dns_sd.h); only DNSSD imports it. No pkgConfig:
        // its Cflags carry -D_REENTRANT, which SwiftPM prohibits (a warning on every build) and
        // glibc ignores; its -I is the default include directory's avahi-compat-libdns_sd/,
        // which shim.h names, and the module map links libdns_sd (what its Libs say).
        .systemLibrary(
            name: "CDNSSD",
            path: "Modules/CDNSSD"
        ),

        // epoll and eventfd (glibc headers Swift's Glibc module leaves out); only the event
        // loop's selector in TransportPOSIX imports it.
        .systemLibrary(
            name: "CEventPoll",
            path: "Modules/CEventPoll"
        ),

        // avahi-daemon's own client library, for the "all for now" signal the dns_sd layer
        // drops; only DNSSD imports it (no pkgConfig, for the same reason as CDNSSD).
        .systemLibrary(
            name: "CAvahiClient",
            path: "Modules/CAvahiClient"
        ),

        // OpenSSL's libcrypto, for SHA-256; only Messaging imports it.
        .systemLibrary(
            name: "CCrypto",
            path: "Modules/CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),

        // OpenSSL's libssl and libcrypto, for the TLS 1.3 stage; only SecureTransport imports it
        // (never in one Swift file with CCrypto).
        .systemLibrary(
            name: "CSSL",
            path: "Modules/CSSL",
            pkgConfig: "libssl",
            providers: [.apt(["libssl-dev"])]
        ),

        // NLnet Labs' ldns, for DNS UPDATE with TSIG and unicast DNS-SD queries; only
        // UnicastDNSSD imports it.
        .systemLibrary(
            name: "CLDNS",
            path: "Modules/CLDNS",
            pkgConfig: "ldns",
            providers: [.apt(["libldns-dev"])]
        ),

        // libsodium, for CPace over ristretto255 (room codes); only RoomCodeExchange imports it.
        .systemLibrary(
            name: "CSodium",
            path: "Modules/CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),

        // Pure modules: values, codecs and state machines; no sockets, no C.
        .target(name: "DiscoveryCore"),
        .target(name: "TransportCore"),
        // Which text is unsafe on a terminal and in member names, and when names look alike.
        .target(name: "SafeText"),
        .target(name: "MessagingCore", dependencies: ["SafeText"]),
        // Which key each service is pinned to (known_peers) and whom svc-connect trusts; file I/O, no C.
        .target(name: "PeerTrust", dependencies: ["TransportCore", "DiscoveryCore", "SafeText"]),
        // Whether the host firewall's rules (nftables JSON, iptables-save) let mDNS and a TCP
        // port in, and the rule that would; parsing and reasoning only.
        .target(name: "FirewallRules"),
        // svc-doctor's checks as functions of what was observed (config files, /proc lines,
        // interfaces, probe results) and its report; no I/O, no C.
        .target(name: "HostDiagnosis", dependencies: ["TransportCore", "FirewallRules", "SafeText"]),

        // I/O: the only importer of CDNSSD and CAvahiClient, and the POSIX socket layer.
        .target(name: "DNSSD", dependencies: ["CDNSSD", "CAvahiClient", "DiscoveryCore", "TransportCore", "SafeText"]),
        .target(name: "TransportPOSIX", dependencies: ["CEventPoll", "TransportCore"]),
        // Runs a system program (nft, dbus-send, ...) with a deadline and bounded output.
        .target(name: "SystemCommand"),
        // Runs nft and iptables-save (bounded, with a timeout) and hands their output to FirewallRules.
        .target(name: "HostFirewall", dependencies: ["FirewallRules", "SystemCommand"]),
        // Identity keys and TLS 1.3 over any ByteStream: the only importer of CSSL.
        .target(name: "SecureTransport", dependencies: ["CSSL", "TransportCore", "TransportPOSIX"]),
        // Room codes and the CPace exchange that checks them: the only importer of CSodium.
        .target(name: "RoomCodeExchange", dependencies: ["CSodium", "TransportCore"]),
        // Unicast DNS-SD (RFC 6763) in a zone on a DNS server, registered by signed DNS UPDATE:
        // the only importer of CLDNS.
        .target(name: "UnicastDNSSD", dependencies: ["CLDNS", "TransportCore"]),
        // Rooms, heartbeats, reconnects and file transfer over TransportPOSIX.
        .target(name: "Messaging", dependencies: ["CCrypto", "MessagingCore", "RoomCodeExchange", "TransportCore", "TransportPOSIX", "DNSSD", "DiscoveryCore", "SafeText"]),

        // Test doubles: a manual clock and in-memory streams, for unit tests and fuzz targets.
        .target(name: "MessagingTesting", dependencies: ["MessagingCore", "TransportCore", "TransportPOSIX"]),

        // Option parsing, help, exit codes, terminal-safe output, signals.
        .target(name: "CommandLineSupport", dependencies: ["DNSSD", "TransportCore", "SafeText"]),
        // How svc-publish and svc-connect print file transfers (keeps libcrypto out of svc-browse).
        .target(name: "MessagingCommandLine", dependencies: ["CommandLineSupport", "Messaging", "MessagingCore"]),
        // What svc-publish, svc-browse, svc-connect and svc-doctor share about unicast zones:
        // the zone and server a command line names, the network's browse domains, exit codes.
        .target(name: "WideAreaCommandLine", dependencies: ["CommandLineSupport", "DiscoveryCore", "UnicastDNSSD"]),

        .executableTarget(
            name: "svc-publish",
            dependencies: ["DNSSD", "DiscoveryCore", "TransportPOSIX", "TransportCore", "Messaging", "MessagingCore", "CommandLineSupport", "MessagingCommandLine", "SecureTransport",
                           "FirewallRules", "HostFirewall", "PeerTrust", "RoomCodeExchange", "UnicastDNSSD", "WideAreaCommandLine"],
            linkerSettings: toolLinkerSettings
        ),
        .executableTarget(
            name: "svc-browse",
            dependencies: ["DNSSD", "DiscoveryCore", "TransportCore", "TransportPOSIX", "MessagingCore", "CommandLineSupport", "SecureTransport", "UnicastDNSSD", "WideAreaCommandLine"],
            linkerSettings: toolLinkerSettings
        ),
        .executableTarget(
            name: "svc-connect",
            dependencies: ["DNSSD", "DiscoveryCore", "TransportPOSIX", "TransportCore", "Messaging", "MessagingCore", "CommandLineSupport", "MessagingCommandLine", "PeerTrust", "SecureTransport",
                           "RoomCodeExchange", "UnicastDNSSD", "WideAreaCommandLine"],
            linkerSettings: toolLinkerSettings
        ),
        .executableTarget(
            name: "svc-doctor",
            dependencies: ["HostDiagnosis", "DNSSD", "DiscoveryCore", "TransportPOSIX", "TransportCore", "CommandLineSupport",
                           "FirewallRules", "HostFirewall", "SystemCommand", "UnicastDNSSD", "WideAreaCommandLine"],
            linkerSettings: toolLinkerSettings
        ),

        // The load generator that Scripts/bench and Scripts/stress drive (not a product).
        .executableTarget(
            name: "svc-bench",
            dependencies: ["DNSSD", "DiscoveryCore", "TransportPOSIX", "TransportCore", "Messaging", "MessagingCore", "CommandLineSupport",
                           "SecureTransport"],
            path: "Benchmarks/svc-bench"
        ),

        // State-level fuzz targets (Scripts/fuzz builds them with libFuzzer; built plainly,
        // each replays the inputs given as arguments).
        stateFuzzTarget("room-server", ["Messaging", "MessagingCore", "MessagingTesting", "TransportCore", "TransportPOSIX", "RoomCodeExchange"]),
        stateFuzzTarget("room-client", ["Messaging", "MessagingCore", "MessagingTesting", "TransportCore", "TransportPOSIX", "DiscoveryCore"]),
        stateFuzzTarget("file-transfer", ["Messaging", "MessagingCore", "MessagingTesting", "TransportCore", "TransportPOSIX"]),
        stateFuzzTarget("secure-link", ["SecureTransport", "MessagingCore", "MessagingTesting", "TransportCore", "TransportPOSIX"]),

        .testTarget(name: "DiscoveryCoreTests", dependencies: ["DiscoveryCore"]),
        .testTarget(name: "TransportCoreTests", dependencies: ["TransportCore"]),
        .testTarget(name: "MessagingCoreTests", dependencies: ["MessagingCore"]),
        .testTarget(name: "SafeTextTests", dependencies: ["SafeText"]),
        .testTarget(name: "FirewallRulesTests", dependencies: ["FirewallRules"]),
        .testTarget(name: "SystemCommandTests", dependencies: ["SystemCommand"]),
        .testTarget(name: "HostDiagnosisTests", dependencies: ["HostDiagnosis", "TransportCore", "FirewallRules"]),
        .testTarget(name: "PeerTrustTests", dependencies: ["PeerTrust", "TransportCore", "DiscoveryCore"]),
        .testTarget(name: "MessagingTests", dependencies: ["Messaging", "MessagingCore", "MessagingTesting", "RoomCodeExchange", "TransportCore", "TransportPOSIX"]),
        .testTarget(name: "DNSSDTests", dependencies: ["DNSSD", "DiscoveryCore", "CAvahiClient"]),
        .testTarget(name: "TransportPOSIXTests", dependencies: ["TransportPOSIX", "TransportCore", "MessagingTesting"]),
        .testTarget(name: "SecureTransportTests", dependencies: ["SecureTransport", "CSSL", "RoomCodeExchange", "MessagingTesting", "TransportCore", "TransportPOSIX"]),
        .testTarget(name: "RoomCodeExchangeTests", dependencies: ["RoomCodeExchange", "TransportCore"]),
        .testTarget(name: "CommandLineSupportTests", dependencies: ["CommandLineSupport", "DNSSD"]),
        // Runs the built tools on the virtual LAN (Scripts/lan); see Scripts/test.
        .testTarget(name: "UnicastDNSSDTests", dependencies: ["UnicastDNSSD"]),
        .testTarget(name: "EndToEndTests", dependencies: ["DNSSD", "DiscoveryCore", "CDNSSD"]),
    ]
)
