import CommandLineSupport
import DNSSD
import DiscoveryCore
import MessagingCore
import RoomCodeExchange
import UnicastDNSSD

/// svc-publish's validated command line.
struct PublishOptions: Sendable {
    var name: InstanceName?
    var type: DiscoveryCore.ServiceType = .p2pipp
    var domain: ServiceDomain = .local
    var interface: NetworkInterface?
    var port: UInt16 = 0
    var txt = TXTRecord()
    /// The TXT item that announces the room's key (docs/PROTOCOL.md, *The secure link*).
    static let keyTXTItem = "key"
    var conflictPolicy: DNSSD.ConflictPolicy = .rename
    /// Where and how to register in a unicast zone (`--dns-server`, `--tsig-key`).
    struct WideArea: Sendable {
        var server: IPAddress
        var keyPath: String
        /// `--dns-timeout`: how long one exchange with the server may take, 1-60 s.
        var timeout = 3
    }
    /// nil: register over mDNS through avahi-daemon.
    var wideArea: WideArea?
    /// `--withdraw`: remove what a crashed publisher left in the unicast zone, then exit.
    var withdraw = false
    var json = false
    var echo = false
    var inbox: String?
    var maximumMembers = 1000
    var heartbeat: Duration = .seconds(15)
    var handshakeTimeout: Duration = .seconds(10)
    var slowMemberTimeout: Duration = .seconds(30)
    var maximumMembersPerHost = 64
    /// Room lines kept for late joiners.
    var history = 20
    /// nil: on when standard output is not a terminal (a log).
    var timestamps: Bool?
    /// `--identity`: the room's private key file; nil for the default (~/.config/svc/identity.pem).
    var identity: String?
    /// `--allow-plaintext`: also let in members that do not speak TLS.
    var allowPlaintext = false
    /// `--room-code`: the room's code; generated (and printed) when the option has no value.
    var roomCode: RoomCode?
    var roomCodeGenerated = false
    /// `--admit`: who may join; `code` when a room code is given, else `open`.
    var admission: Admission = .open
    /// `--code-cooldown`: how long room codes are refused once too many were wrong.
    var codeCoolDown: Duration = .seconds(60)

    static let spec = CommandSpec(
        name: "svc-publish",
        version: svcVersion,
        overview: "Serve on a TCP port and publish it with DNS-SD so peers can find it by name.",
        options: [
            .init("name", value: "name", help: "The instance name, 1 to 63 bytes of UTF-8 (default: the host name)."),
            .serviceType,
            .domain,
            .init("dns-server", value: "address", help: "Register in the unicast zone --domain on this DNS server by signed DNS UPDATE\n(with --tsig-key) instead of over mDNS, so other subnets find the room."),
            .init("tsig-key", value: "path", completion: .file, help: "The TSIG key for --dns-server, as 'tsig-keygen' writes it; refused when others can\nread it (chmod 600)."),
            .init("dns-timeout", value: "seconds", help: "With --dns-server: how long to wait for the server's answer to one update or query,\n1 to 60 (default: 3); for a slow or distant server."),
            .init("withdraw", help: "With --name and --dns-server: remove what a crashed publisher of this host left\nunder that name in the zone (only when nothing here serves its port), and exit."),
            .interface,
            .init("port", value: "port", help: "The TCP port to listen on (default: 0, any free port). Give one the firewall lets in when it only allows fixed ports."),
            .init("txt", value: "key=value", repeatable: true, help: "A TXT record item: key=value, key= or key alone."),
            .init("conflict", value: "policy", completion: .values(DNSSD.ConflictPolicy.allCases.map(\.rawValue)), help: "When the name is taken: rename (default) or fail."),
            .json,
            .init("echo", help: "Answer every text with the same text, to its sender (for tests and benchmarks)."),
            .init("inbox", value: "dir", completion: .directory, help: "Accept files from peers into this directory (default: refuse files)."),
            .init("max-clients", value: "n", help: "Members at most; more are refused (default: 1000)."),
            .init("heartbeat", value: "seconds", help: "Ping a member after this much silence; drop it after 3 more (default: 15)."),
            .init("handshake-timeout", value: "seconds", help: "Close connections that have not said HELLO by then (default: 10)."),
            .init("max-clients-per-host", value: "n", help: "Once the room is half full, refuse members from a host that has this many (default: 64)."),
            .init("slow-timeout", value: "seconds", help: "Longest a line from standard input waits for members with more than 1 MiB unread; those still over it are then dropped (default: 30)."),
            .init("history", value: "n", help: "Show a member who joins the last n lines said to everyone, at most \(RoomHistory.maximumLines); 0: none (default: 20). /msg lines are never kept."),
            .init("identity", value: "path", completion: .file, help: "The room's private key (default: ~/.config/svc/identity.pem, created on first use)."),
            .init("allow-plaintext", help: "Also let in members without TLS (older svc-connect); their keys are not checked."),
            .init("room-code", value: "code", optionalValue: true,
                  help: "New members must prove this code (svc-connect --room-code); without a value, one is\nmade and printed to read out. Keys that pass are remembered in the members file."),
            .init("admit", value: "who", help: "Who may join: open (anyone), known (only keys in the members file),\ncode (listed keys and new ones with the room code). Default: code with\n--room-code, else open."),
            .init("code-cooldown", value: "seconds", help: "How long room codes are refused (too-many-attempts) once \(GuessLimiter.Limits().perAddress) were tried\nfrom a host or a key, or \(GuessLimiter.Limits().overall) in the room, within a minute (default: 60; the\nroom's ends up to a third later, at random; a shorter one ends only once\nthose tries are a minute old)."),
            .timestamps,
            .noTimestamps,
        ],
        discussion: """
            Listens on IPv6 and IPv4, registers the service, and prints the registered name
            once the daemon confirms it (it is renamed 'name #2' when taken). Hosts a room
            (protocol: docs/PROTOCOL.md): members join with svc-connect, text goes to every
            other member, and each line of standard input goes to every member, or is a
            command: /msg <name> <text>, /who, /send <name> <path> (into the member's
            --inbox), /help, /quit; a name or path with spaces goes in double quotes (\\" is a
            quote inside), a path starting with ~/ is in your home directory. What you type
            is printed too, as '<name>: <text>'. The publisher relays every /msg between
            members, so it can read them: they are printed here as '<member> -> <member>:
            <text>'. A member who joins is first shown the last lines said to everyone
            (--history). End of input does not stop it; SIGINT, SIGTERM or /quit says goodbye
            to the members, withdraws the service and exits 0; interactive members wait for
            it to come back. /who, /help and /quit are done as soon as they are read, even
            while a line waits for a member that reads slowly (--slow-timeout) and up to 16
            lines wait behind it; the lines still waiting when the room closes are reported
            as not sent.

            Members connect over TLS 1.3: the room's key (--identity, default
            ~/.config/svc/identity.pem, made on first use) is announced in the TXT record
            (key=) and printed when the room is registered; members pin it. Each joined line
            shows the member's short key and the session's safety code, which the member
            sees too: read them to each other to be sure nobody is in between. A name
            belongs to the first key that joined with it, for the life of the room. A client
            without TLS is refused (tls-required) unless --allow-plaintext.

            ROOM CODES AND MEMBERS: with --room-code, a key the room does not know must
            prove the code before its HELLO (a password-authenticated exchange, CPace,
            inside TLS and bound to the session and both keys: one guess per connection,
            nothing to test offline, and a relay fails even forwarding every byte); others
            get code-required. A made code is printed as 'room code 4829-1530-7719 (about
            36.5 bits)': read it out. Keys that pass are added to the members file beside
            the room's key (default ~/.config/svc/members; one 'SHA256:<key> <name>' line
            each), so they need no code again. A wrong code is printed as 'room code failed
            from <address> (key <short key>): <reason>'. --admit known lets in only the keys
            in the members file, under the name listed there; others get not-admitted.
            Members without TLS never pass a code nor a list. --inbox then takes files only
            from admitted members.

            When it can read the local firewall (nftables or iptables; it needs root), it
            says on standard error if the firewall would drop incoming TCP to its port or
            mDNS (UDP 5353), naming the rule and the command that lets the traffic in. A
            firewall that only allows fixed ports: publish on one of them with --port
            (svc-publish names the ones it found).

            OUTPUT:
              registered "<name>" <type> <domain> port <port> key <key>
              room code <code> (about <bits> bits)      (a made --room-code)
              joined #<n> <member> (key <short key>, safety code <code>) from <address>
              room code failed from <address> (key <short key>): <reason>
              left #<n> <member>: <reason>
              <member>: <text>                          <member> -> <member>: <text>
              receiving "<file>" from <member> ...     stored "<file>" from <member> ...
              sending "<file>" to <member> ...         sent "<file>" to <member> ...
              With --json, the same events as JSON objects with "event" and "time".
              While a file moves, a progress bar on standard error when it is a terminal
              (sizes in binary units: 1 KiB = 1024 bytes, 1 MiB = 1024 KiB; rate, elapsed
              time, ETA; "stalled" after 5 s without data); with --json, file-progress
              events instead, at most one a second per file plus the last.
              Lines start with the local time, YYYY-MM-DD HH:MM:SS, when standard output
              is not a terminal or with --timestamps; --no-timestamps turns that off.
              Printing never holds up the room: a standard output or error that is not
              read keeps up to 4 MiB, then drops lines and says how many on standard error.
              When standard output is closed, the room goes on and events are no longer
              printed.

            \(ExitCode.table)

            EXAMPLES:
              svc-publish --name "Living room" --txt version=1
              svc-publish --port 4242 --conflict fail --json
              svc-publish --name "Living room" --room-code
            """,
        files: [.identityFile, .membersFile],
        environment: [.configHome, .systemBus])

    init(_ parsed: ParsedCommandLine) throws(UsageError) {
        if let text = parsed.value("name") { name = try validated { () throws(DiscoveryError) in try InstanceName(text) } }
        type = try parsed.serviceType()
        domain = try parsed.domain()
        interface = try parsed.networkInterface()
        if let text = parsed.value("port") { port = try parsePort(text, option: "port") }
        let items = parsed.values("txt")
        txt = try validated { () throws(DiscoveryError) in try TXTRecord(items: items) }
        if txt[Self.keyTXTItem] != nil {
            throw UsageError("the TXT item '\(Self.keyTXTItem)' announces the room's key and is set by svc-publish; give your item another name")
        }
        if let text = parsed.value("conflict") {
            guard let policy = DNSSD.ConflictPolicy(rawValue: text) else {
                throw UsageError("--conflict takes 'rename' or 'fail', not '\(text)'")
            }
            conflictPolicy = policy
        }
        switch (parsed.value("dns-server"), parsed.value("tsig-key")) {
        case (nil, nil):
            break
        case (let server?, let key?):
            guard let address = IPAddress(server) else { throw UsageError("--dns-server takes an IPv4 or IPv6 address, not '\(server)'") }
            guard domain != .local else { throw UsageError("--dns-server registers in a unicast zone: give it with --domain, e.g. --domain lab.example.") }
            guard !key.isEmpty else { throw UsageError("--tsig-key takes the path of a key file, not an empty string") }
            wideArea = WideArea(server: address, keyPath: key)
        case (nil, _?):
            throw UsageError("--tsig-key signs updates to a DNS server: give --dns-server too")
        case (_?, nil):
            throw UsageError("--dns-server needs --tsig-key: the zone takes only signed updates")
        }
        if let text = parsed.value("dns-timeout") {
            guard wideArea != nil else { throw UsageError("--dns-timeout bounds the exchanges with --dns-server: give --dns-server and --tsig-key too") }
            guard let seconds = Int(text), (1...60).contains(seconds) else {
                throw UsageError("--dns-timeout takes a whole number of seconds from 1 to 60, not '\(text)'")
            }
            wideArea?.timeout = seconds
        }
        withdraw = parsed.flag("withdraw")
        if withdraw, wideArea == nil || name == nil {
            throw UsageError("--withdraw removes a name from a unicast zone: give --name, --domain, --dns-server and --tsig-key")
        }
        if wideArea != nil, interface != nil {
            throw UsageError("--interface chooses an mDNS link; a unicast zone is reached through the DNS server: leave out --interface")
        }
        json = parsed.flag("json")
        echo = parsed.flag("echo")
        inbox = parsed.value("inbox")
        if let text = parsed.value("max-clients") {
            guard let count = Int(text), count >= 1 else { throw UsageError("--max-clients takes a whole number of at least 1, not '\(text)'") }
            maximumMembers = count
        }
        if let text = parsed.value("heartbeat") { heartbeat = try parseSeconds(text, option: "heartbeat") }
        if let text = parsed.value("handshake-timeout") { handshakeTimeout = try parseSeconds(text, option: "handshake-timeout") }
        if let text = parsed.value("max-clients-per-host") {
            guard let count = Int(text), count >= 1 else { throw UsageError("--max-clients-per-host takes a whole number of at least 1, not '\(text)'") }
            maximumMembersPerHost = count
        }
        if let text = parsed.value("slow-timeout") { slowMemberTimeout = try parseSeconds(text, option: "slow-timeout") }
        if let text = parsed.value("history") {
            guard let count = Int(text), (0...RoomHistory.maximumLines).contains(count) else {
                throw UsageError("--history takes a whole number from 0 to \(RoomHistory.maximumLines), not '\(text)'")
            }
            history = count
        }
        timestamps = try parsed.timestamps()
        identity = parsed.value("identity")
        if let identity, identity.isEmpty { throw UsageError("--identity takes the path of a private key file, not an empty string") }
        allowPlaintext = parsed.flag("allow-plaintext")
        if let text = parsed.value("room-code") {
            do {
                if text.isEmpty {
                    roomCode = try RoomCode.generate()
                    roomCodeGenerated = true
                } else {
                    roomCode = try RoomCode(parsing: text)
                }
            } catch {
                throw UsageError("--room-code: \(error)")
            }
            admission = .code
        }
        if let text = parsed.value("admit") {
            guard let chosen = Admission(rawValue: text) else { throw UsageError("--admit takes 'open', 'known' or 'code', not '\(text)'") }
            admission = chosen
        }
        if let text = parsed.value("code-cooldown") { codeCoolDown = try parseSeconds(text, option: "code-cooldown") }
        if admission == .code, roomCode == nil { throw UsageError("--admit code needs a room code: give --room-code (alone, to make one)") }
        if admission == .known, roomCode != nil {
            throw UsageError("--admit known lets in only the keys in the members file, and a room code would add keys: leave out --room-code, or use --admit code")
        }
    }
}
