import CommandLineSupport
import DiscoveryCore
import UnicastDNSSD
import MessagingCore
import RoomCodeExchange
import TransportCore

/// svc-connect's validated command line.
struct ConnectOptions: Sendable {
    /// The name as given: the instance name, or the form svc-browse shows it in.
    var name: String
    /// The name `name` stands for when it is read as svc-browse shows names (`\\`, `\"`,
    /// `\u{HEX}`, optional double quotes: `TerminalSafe.unescape`), when that is another name
    /// of 1 to 63 bytes; nil otherwise. Used only when no service has the name as given.
    var unescapedName: String?
    /// False when `name` as given cannot be an instance name (too long, or with a control
    /// character) but `unescapedName` can: only `unescapedName` is looked for.
    var nameAsGivenIsValid: Bool { (try? InstanceName(name)) != nil }
    var type: DiscoveryCore.ServiceType = .p2pipp
    var domain: ServiceDomain = .local
    var interface: NetworkInterface?
    /// `--dns-server`: the server of a unicast --domain (default: resolv.conf's first).
    var dnsServer: UnicastDNSSD.IPAddress?
    /// Whether --domain is a unicast zone, resolved on its DNS server instead of over mDNS.
    var isUnicast: Bool { domain != .local }
    var timeout: Duration = .seconds(5)
    var message: String?
    var memberName: String?
    var files: [String] = []
    var reconnect = true
    var retryMaximum: Duration = .seconds(64)
    var heartbeat: Duration = .seconds(15)
    var inbox: String?
    var json = false
    var timestamps = false
    /// `--identity`: the private key file; nil for the default, identity.pem beside known_peers.
    var identity: String?
    /// `--fingerprint`: the key to accept, full or shortened (well-formed, checked here).
    var fingerprint: String?
    /// `--strict`: only a pinned key or the one given with --fingerprint.
    var strict = false
    /// `--forget`: remove the name's pin from known_peers and exit, without the network.
    var forget = false
    /// `--allow-plaintext`: join without TLS.
    var allowPlaintext = false
    /// `--room-code`: the room's code, proved with the room-code exchange before joining.
    var roomCode: RoomCode?

    static let spec = CommandSpec(
        name: "svc-connect",
        version: svcVersion,
        overview: "Find a published service by name, join its room, and exchange text and files.",
        arguments: [.init("name", help: "The instance name, as svc-browse shows it (quotes and escapes included) or as it is.")],
        options: [
            .serviceType,
            .domain,
            .init("dns-server", value: "address", help: "The DNS server of a unicast --domain (default: the first nameserver of\n/etc/resolv.conf)."),
            .interface,
            .init("timeout", value: "seconds", help: "How long finding and connecting may take (default: 5)."),
            .init("as", value: "name", help: "Your name in the room (default: user@host); a taken name gets a suffix."),
            .init("message", value: "text", help: "Send this one line to everyone, print what arrives meanwhile, and exit."),
            .init("send", value: "file", repeatable: true, completion: .file, help: "Send this file to the publisher (verified by SHA-256), then exit."),
            .init("inbox", value: "dir", completion: .directory, help: "Accept files from the publisher and other members into this directory."),
            .init("no-reconnect", help: "Exit (74) when the connection drops or the room closes, instead of waiting for it."),
            .init("retry-max", value: "seconds", help: "Longest wait between reconnect attempts (1, 2, 4 ... up to this; default: 64)."),
            .init("heartbeat", value: "seconds", help: "Ping the server after this much silence (default: 15)."),
            .init("identity", value: "path", completion: .file, help: "Your private key (default: ~/.config/svc/identity.pem, created on first use)."),
            .init("fingerprint", value: "key", help: "Accept only this key (SHA256:... as svc-publish shows it, or its first 12+ characters); pin it."),
            .init("strict", help: "Join only a service pinned in known_peers or given by --fingerprint (no trust on first contact)."),
            .init("forget", help: "Remove the pinned key of <name> from known_peers and exit (needs no network)."),
            .init("allow-plaintext", help: "Join without TLS (an older publisher): no key is checked; refused for a pinned name."),
            .init("room-code", value: "code", help: "The room code its owner read out (e.g. 4829-1530-7719): proves you know it, and\npins the room's key without trust on first use (79: it did not match)."),
            .json,
            .timestamps,
        ],
        discussion: """
            Resolves the name, tries every address of the host (IPv6 and IPv4, raced as in
            Happy Eyeballs), says on standard error which one answered first, and joins the
            room. Each line of standard input goes to everyone, or is a command:
            /msg <name> <text>, /who, /send <path> (a file to the publisher), /send <name>
            <path> (a file to a member, passed on by the publisher into that member's
            --inbox), /help, /quit (start a line with // to send a literal /). A name or path
            with spaces goes in double quotes (/msg "Living room" hi; \\" is a quote inside);
            a path starting with ~/ is in your home directory. A mistyped command or a file
            that cannot be read is reported and changes nothing else. /msg text goes through
            the publisher, who relays it and can read it. On joining, it shows the room's last
            lines, marked [history <time>]; a taken name gets a suffix and is announced:
            '* the name alice is taken in this room; you are alice-2'. With --json, every
            event, connection notes and errors included, is a JSON object on standard
            output (the README lists them). When the connection drops, it reconnects with
            exponential backoff, finding the service again each time; lines typed meanwhile
            are sent afterwards, or reported as not sent when it gives up. The delays and
            attempts count on until a connection stays up 30 s, so a server that lets it in
            and drops it at once is given up on too. When the room closes (its publisher
            stopped and said goodbye), it says so and looks for a room of the same name
            every 2 s (up to 32 s apart while the room keeps closing within 30 s), each look
            listening for the name up to --timeout, until one takes it back, input ends or
            Ctrl-C; --message and --send end instead. Every reconnect and rejoin accepts only
            the room's pinned key, from whatever address it answers (see KEYS); another key
            is refused (77) before anything is sent. With --allow-plaintext, which has no
            keys, a reconnect or rejoin that lands on another host than the first join warns
            ("... now answers from another host, 10.0.0.9, not 10.0.0.5: it may be someone
            else") and reports what was queued for the old room (lines, /msg, files) as not
            sent; someone who takes over the same host address is not detected.
            It exits when input ends (Ctrl-D) or on /quit once everything was delivered, or
            when the server confirms nothing for 4 heartbeat intervals; what it did not
            confirm is then reported as not sent. Before that, a server that confirms
            nothing for 4 heartbeat intervals while input waits for it is treated as a lost
            connection (reconnect, send again; after the last attempt, exit 74). Ctrl-C
            leaves at once and lists what was not delivered. Printing never holds up the
            room: output that is not read keeps up to 4 MiB, then lines are dropped and
            counted on standard error; when standard output is closed, it stays in the room
            and stops printing. While a file moves, standard error shows a progress bar
            when it is a terminal (sizes in binary units: 1 KiB = 1024 bytes, 1 MiB = 1024
            KiB; rate, elapsed time, ETA; "stalled" after 5 s without data, "reconnecting"
            while the connection is restored), and a transfer that resumes says "resuming
            at N" (bytes); with --json, file-progress events instead, at most one a second
            per file plus the last.

            NAMES: <name> is the instance name as it is, or as svc-browse shows it: svc-browse
            puts names between double quotes and writes \\\\ for a backslash, \\" for a quote and
            \\u{HEX} for a tab or a character that draws nothing (Living\\u{200B} room has a
            zero-width space) or controls the terminal. When no service has <name> exactly as
            given, it is read that way (the quotes are optional) and that name is looked for;
            a service named exactly as given always wins. Copy the name from svc-browse's
            output, quotes included, and quote it for the shell: svc-connect '"bk\\\\sl\\"q"'
            joins the service named bk\\sl"q.

            KEYS: as ssh's known_hosts, the room's key is pinned in known_peers
            ($XDG_CONFIG_HOME/svc/known_peers, default ~/.config/svc/known_peers), one line
            '<service> <key>' per name. A pinned name must present that key; --fingerprint
            accepts only the key given and pins it; otherwise, on first contact, the key the
            service announces is pinned (--strict refuses that). A key that does not match is
            refused before anything is sent (77). --forget <name> removes a pin (78 when
            known_peers cannot be read or written).
            ROOM CODES: a room started with svc-publish --room-code lets in a new key only
            when it proves the code: --room-code runs a password-authenticated exchange
            (CPace) inside TLS, bound to this TLS session and both keys, before joining. The
            room proves it knows the code too, so its key is pinned without trust on first
            use (said so). One guess per connection, nothing to test offline; a relay in
            between fails even when it forwards every byte. A wrong code exits 79; a room
            that needs a code (code-required) or admits only listed keys (not-admitted)
            exits 80; too many wrong codes from anyone (too-many-attempts) exits 75. Once
            in, the room remembers your key: later joins need no code.
            Every connection is TLS 1.3 with your own key (--identity); the joined line
            and /who show the session's safety code, which the publisher shows too: read
            them to each other to be sure nobody is in between.

            \(ExitCode.table)

            EXAMPLES:
              svc-connect "Living room" --as alice
              svc-connect "Living room" --send holiday.mp4 --send notes.txt
              svc-connect "Living room" --message "hello" --timeout 2
            """,
        files: [.identityFile, .knownPeersFile],
        environment: [.configHome, .systemBus])

    init(_ parsed: ParsedCommandLine) throws(UsageError) {
        name = parsed.positionals[0]
        unescapedName = TerminalSafe.unescape(name).flatMap { $0 != name && (1...63).contains($0.utf8.count) ? $0 : nil }
        if unescapedName == nil || nameAsGivenIsValid {
            _ = try validated { () throws(DiscoveryError) in try InstanceName(name) }
        }
        type = try parsed.serviceType()
        domain = try parsed.domain()
        interface = try parsed.networkInterface()
        if let text = parsed.value("dns-server") {
            guard let address = UnicastDNSSD.IPAddress(text) else { throw UsageError("--dns-server takes an IPv4 or IPv6 address, not '\(text)'") }
            guard isUnicast else { throw UsageError("--dns-server is the server of a unicast zone: give the zone with --domain, e.g. --domain lab.example.") }
            dnsServer = address
        }
        if isUnicast, interface != nil {
            throw UsageError("--interface chooses an mDNS link; a unicast zone is reached through its DNS server: leave out --interface")
        }
        if let text = parsed.value("timeout") { timeout = try parseSeconds(text, option: "timeout") }
        message = parsed.value("message")
        if let message, message.contains("\n") { throw UsageError("--message takes one line; it may not contain a newline") }
        memberName = parsed.value("as")
        if let memberName, let problem = Roster.problem(inName: memberName) { throw UsageError("--as: \(problem)") }
        files = parsed.values("send")
        reconnect = !parsed.flag("no-reconnect")
        if let text = parsed.value("retry-max") { retryMaximum = max(.seconds(1), try parseSeconds(text, option: "retry-max")) }
        if let text = parsed.value("heartbeat") { heartbeat = try parseSeconds(text, option: "heartbeat") }
        inbox = parsed.value("inbox")
        json = parsed.flag("json")
        timestamps = try parsed.timestamps() ?? false
        identity = parsed.value("identity")
        if let identity, identity.isEmpty { throw UsageError("--identity takes the path of a private key file, not an empty string") }
        fingerprint = parsed.value("fingerprint")
        if let fingerprint, !PublicKeyFingerprint.isWellFormedPrefix(fingerprint) {
            throw UsageError("--fingerprint takes a key as svc-publish shows it, SHA256: and 43 characters of base64, or at least its first 12 characters; '\(fingerprint)' is not one")
        }
        strict = parsed.flag("strict")
        allowPlaintext = parsed.flag("allow-plaintext")
        if let text = parsed.value("room-code") {
            if allowPlaintext { throw UsageError("--room-code is checked only inside TLS; it cannot go with --allow-plaintext") }
            do {
                roomCode = try RoomCode(parsing: text)
            } catch {
                throw UsageError("--room-code: \(error)")
            }
        }
        forget = parsed.flag("forget")
        if forget {
            // --forget only edits known_peers: an option that would act on the room is a mistake.
            let allowed: Set = ["forget", "type", "domain"]
            let given = Self.spec.options.filter { !allowed.contains($0.long) && (parsed.flag($0.long) || parsed.value($0.long) != nil) }
            if let other = given.first {
                throw UsageError("--forget only removes a pin from known_peers; it cannot go with --\(other.long)")
            }
        }
    }
}
