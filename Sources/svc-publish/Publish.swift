import CommandLineSupport
import DNSSD
import Dispatch
import DiscoveryCore
import Glibc
import Messaging
import MessagingCore
import SecureTransport
import Synchronization
import TransportCore
import TransportPOSIX
import struct UnicastDNSSD.UnicastDNSSDError

@main
struct SvcPublish {
    static func main() async {
        await ToolMain.run(PublishOptions.spec, validate: PublishOptions.init, json: { $0.json }) { options in
            try await publish(options)
        }
    }

    /// Listens, registers, hosts the room until SIGINT/SIGTERM, then withdraws the service.
    static func publish(_ options: PublishOptions) async throws -> ExitCode {
        // A log (standard output not a terminal) gets timestamps unless told otherwise.
        let output = EventOutput(json: options.json, timestamps: options.timestamps ?? (isatty(STDOUT_FILENO) != 1))
        if options.withdraw, let settings = options.wideArea, let name = options.name {
            // Only records registered with this user's key are ours; no key file, nothing is.
            let identityPath = try identityFile(options.identity)
            let fingerprint = access(identityPath, F_OK) == 0 ? try loadIdentity(identityPath).fingerprint : nil
            return try await WideAreaPublication.withdrawLeftover(settings, name: name.value, type: options.type, domain: options.domain,
                                                                  fingerprint: fingerprint, output: output)
        }
        let inbox: Inbox?
        do {
            inbox = try options.inbox.map { (path) throws(FileError) in try Inbox(directory: path) }
        } catch {
            throw ToolFailure(.osError, error.message)
        }
        let identityPath = try identityFile(options.identity)
        let identity = try loadIdentity(identityPath)
        // An open room without a code lists nobody: its members file is not even read.
        let members = options.admission == .open && options.roomCode == nil ? nil : try MembersDirectory(besideIdentity: identityPath)
        if options.admission == .known, let members, members.count == 0 {
            Console.note("--admit known: '\(members.path)' lists nobody, so nobody can join; add lines 'SHA256:<key> <name>'")
        }
        let fileLimit = ResourceLimits.raiseOpenFileLimit()
        if fileLimit < UInt64(options.maximumMembers) + 64 {
            Console.note("only \(fileLimit) open files are allowed, fewer than --max-clients \(options.maximumMembers) needs; raise 'ulimit -n'")
        }
        let listener: TCPListener
        do {
            // 256 KiB (512 KiB to Linux) per member: the kernel's share of what members that
            // read slowly hold, outside the room's bound on outboxes (a review's 960 such
            // members had grown their send buffers to 1.26 MB each, 624 MB in all); a LAN's
            // round trip needs far less for full speed.
            listener = try TCPListener(port: options.port, sendBuffer: 256 << 10)
        } catch {
            throw ToolFailure(.osError, "cannot listen on TCP port \(options.port): \(error)")
        }
        let txt = try announcing(identity, in: options.txt)
        // From here on SIGINT and SIGTERM never kill the tool: during the first registration
        // they cancel it (and what it may have written is withdrawn), later they close the room.
        let interruption = Interruption()
        // Over mDNS through avahi-daemon, or in a unicast zone by signed DNS UPDATE.
        let registration: ServiceRegistration?
        let wideArea: WideAreaPublication?
        if let settings = options.wideArea {
            let name = options.name?.value ?? HostAddresses.hostLabel().map { String(decoding: $0, as: UTF8.self) } ?? "svc"
            do {
                wideArea = try await interruption.cancelling { [type = options.type, domain = options.domain, port = listener.port, conflict = options.conflictPolicy] in
                    try await WideAreaPublication.register(settings, name: name, type: type, domain: domain,
                                                           port: port, txt: txt, key: identity.fingerprint, conflict: conflict)
                }
            } catch let interrupted as WideAreaPublication.Interrupted {
                throw interruptedFailure(await WideAreaPublication.withdraw(interrupted, interruption: interruption),
                                         signal: interruption.signal ?? SIGINT, name: name, options: options, settings: settings)
            }
            registration = nil
        } else {
            do {
                registration = try await interruption.cancelling { [options, port = listener.port] in
                    try await ServiceRegistration.register(.init(
                        name: options.name, type: options.type, domain: options.domain, port: port,
                        txt: txt, interface: options.interface, conflictPolicy: options.conflictPolicy))
                }
            } catch where interruption.signal != nil {
                // Avahi withdraws a registration whose connection is gone.
                throw ToolFailure(.signalled(interruption.signal ?? SIGINT), "interrupted before the service was registered: \(error)")
            }
            wideArea = nil
        }
        let name = wideArea?.name ?? registration?.name ?? ""
        let onInterface = options.interface.map { " on \($0.name)" } ?? ""
        output.emit("registered", text: "registered \(TerminalSafe.quoted(name)) \(options.type.baseType) \(options.domain)\(onInterface) port \(listener.port) key \(identity.fingerprint.full)", [
            ("name", .string(name)), ("type", .string(options.type.baseType)),
            ("domain", .string(options.domain.name)), ("port", .integer(Int(listener.port))),
            ("key", .string(identity.fingerprint.full)),
        ] + (options.interface.map { [("interface", .string($0.name))] } ?? []))
        if let code = options.roomCode {
            let strength = "about \((code.strengthBits * 10).rounded(.down) / 10) bits"
            if options.roomCodeGenerated {
                output.emit("room_code", text: "room code \(code.spokenForm) (\(strength)): read it to whoever may join",
                            [("code", .string(code.spokenForm)), ("strength_bits", .integer(Int(code.strengthBits)))])
            }
        }
        FirewallWarnings.start(port: listener.port)

        // The room, its connections and their timers live on one event loop.
        let loop: EventLoop
        do {
            loop = try EventLoop(name: "svc-publish")
        } catch {
            throw ToolFailure(.osError, "cannot start the event loop: \(error)")
        }
        defer { loop.shutdown() }
        var roomOptions = RoomServer.Options(name: name)
        roomOptions.echo = options.echo
        roomOptions.inbox = inbox
        roomOptions.maximumMembers = options.maximumMembers
        roomOptions.heartbeatInterval = options.heartbeat
        roomOptions.handshakeTimeout = options.handshakeTimeout
        roomOptions.slowMemberTimeout = options.slowMemberTimeout
        roomOptions.maximumMembersPerHostUnderLoad = options.maximumMembersPerHost
        roomOptions.historyLength = options.history
        roomOptions.ownKey = identity.fingerprint
        roomOptions.roomCode = options.roomCode
        roomOptions.admission = options.admission
        roomOptions.members = members
        roomOptions.guessLimits.coolDown = options.codeCoolDown
        roomOptions.guessLimits.coolDownJitter = options.codeCoolDown / 3
        let roomOutput = RoomOutput(output: output, loop: loop)
        let room = RoomServer(options: roomOptions, scheduler: loop)
        // Events are printed on the loop (RoomOutput lives there), one at a time: while this
        // task is behind, the room stops reading from its members. The task runs on the loop
        // itself (its executor preference), so taking an event and printing it wakes no other
        // thread; on Swift's pool each event cost four thread hand-offs (docs/BENCHMARKS.md, row 7).
        let printing = Task(executorPreference: loop) {
            for await event in room.events { roomOutput.print(event) }
        }
        let refusal = Message.error(code: ProtocolError.Code.tlsRequired.rawValue, message: tlsRequired).frame.encoded
        // Out of file descriptors, accepting fails every time the listener retries (each 100 ms):
        // a few lines, then a count every 10 s.
        let acceptFailures = LimitedReports(burst: 3, period: .seconds(10), scheduler: loop) { count in
            Console.note("accepting connections failed \(count) more times in the last 10 s")
        }
        listener.start(on: loop, onError: { error in
            if acceptFailures.admit() { Console.note("accepting a connection failed: \(error)") }
        }) { socket, peer in
            // A link-local peer's neighbour entry, read now so that room-code guesses can be
            // charged to its machine only if the entry stands until CODE_START.
            let neighbour = peer.flatMap { NeighbourTable.atAccept(peer: $0, socket: socket) }
            room.accept(NegotiatingServerStream(over: Connection(socket: socket, peer: peer, loop: loop), scheduler: loop,
                                                identity: identity, allowsPlaintext: options.allowPlaintext, refusal: refusal),
                        neighbour: neighbour)
        }
        /// Ends the room as SIGINT does; set once the room is up.
        let quit = Mutex<ResumeOnce<DNSSDError?>?>(nil)
        // The operator's lines, each sent once the members' outboxes have room (`send`): a pipe
        // into the room is read as fast as the members take it, and nobody is cut off. Text,
        // `/msg` and `/send` go in order through `outgoing` to `sending`; `/quit`, `/help` and
        // `/who` take effect as soon as they are read, ahead of the lines that wait, so the
        // operator can see who is there and close the room while a line waits for a slow
        // member (up to `--slow-timeout`). Past `linesWaitingToBeSent`, input is not read.
        let outgoing = Handoff<RoomCommand>(capacity: linesWaitingToBeSent)
        let sending = Task {
            while let command = await outgoing.take() {
                do {
                    try await room.send(command)
                } catch {
                    // Once the room closes, each line that waited says it was not sent.
                    Console.note("\(error)")
                }
            }
        }
        // One line waits in standard input's own hand-off (the rest wait in `outgoing`), so that
        // a closing room can report every line read and not sent: those `outgoing` still holds
        // (by `sending`), the one the reading task holds (its result), the one waiting here.
        let input = StandardInputLines.lines(bufferedLines: 1)
        let reading = Task { () -> RoomCommand? in
            defer { outgoing.finish() }
            for await line in input {
                guard let command = operatorCommand(line) else { continue }
                switch command {
                case .quit:
                    quit.withLock { $0 }?.resume(nil)
                    return nil // what follows is not read
                case .help: Console.note(RoomCommand.publisherSummary + "; " + leaving)
                case .who:
                    do {
                        try await room.send(command) // needs no outbox: never waits
                    } catch {
                        Console.note("\(error)")
                    }
                case .say, .message, .send:
                    guard await outgoing.enqueue(command) else { return command } // the room is closing
                }
            }
            return nil
        }

        /// Renews a unicast registration while the room runs; stopped before the withdrawal.
        let refresher = Mutex<Task<Void, Never>?>(nil)
        let failure = await withCheckedContinuation { (stopped: CheckedContinuation<DNSSDError?, Never>) in
            let once = ResumeOnce(stopped, ifDropped: nil)
            quit.withLock { $0 = once }
            interruption.onSignal { once.resume(nil) }
            if let wideArea {
                refresher.withLock { $0 = Task {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: WideAreaPublication.refreshInterval)
                        if Task.isCancelled { break }  // the room is closing: withdraw, do not refresh
                        do throws(UnicastDNSSDError) {
                            if let newName = try await wideArea.refresh() {
                                loop.execute { room.rename(newName) }
                                output.emit("restored", text: "registered again as \(TerminalSafe.quoted(newName))", [("name", .string(newName))])
                            }
                        } catch where error.code == .cancelled {
                            break
                        } catch {
                            Console.note("could not refresh the registration: \(error); trying again in \(WideAreaPublication.refreshInterval.components.seconds) s")
                        }
                    }
                } }
            }
            guard let registration else { return }
            Task {
                for await event in registration.events {
                    switch event {
                    case .renamed(let newName):
                        loop.execute { room.rename(newName) }
                        output.emit("renamed", text: "renamed \(TerminalSafe.quoted(newName))", [("name", .string(newName))])
                    case .restored(let newName):
                        loop.execute { room.rename(newName) }
                        output.emit("restored", text: "registered again as \(TerminalSafe.quoted(newName))", [("name", .string(newName))])
                    case .daemonLost(let error):
                        Console.note("\(error.lostMessage); the service will be registered again as soon as it is back")
                    case .failed(let error):
                        once.resume(error)
                    }
                }
            }
        }
        await registration?.cancel()
        if let task = refresher.withLock({ $0 }) {
            task.cancel()
            await task.value  // a refresh in flight must not register again after the withdrawal
        }
        await wideArea?.withdraw()
        listener.cancel()
        reading.cancel()
        // The line waiting for a member, and each after it, fail with "the room is closing";
        // then, in the order they were read, the line the reading task held and the one
        // waiting in standard input's hand-off. (A line the reading thread is still handing
        // over, blocked while the hand-off is full, is neither sent nor reported.)
        await room.closeAll(within: .seconds(2))
        await sending.value
        let unread = [await reading.value].compactMap { $0 } + input.removeWaiting().compactMap { line in
            switch operatorCommand(line, reportingMistakes: false) {
            case let command? where command.isSent: command
            default: nil
            }
        }
        for command in unread { Console.note("\(RoomServer.SendFailed.roomClosing(command))") }
        await printing.value
        withExtendedLifetime(interruption) {}
        if let failure { throw failure }
        return .success
    }

    /// The tool's failure when a signal cancelled the first unicast registration: the
    /// signal's code (130, 143), and whether the zone holds anything of it.
    static func interruptedFailure(_ outcome: WideAreaPublication.InterruptedOutcome, signal: Int32, name: String,
                                   options: PublishOptions, settings: PublishOptions.WideArea) -> ToolFailure {
        let what = "\(signal == SIGTERM ? "stopped by SIGTERM" : "interrupted") before the registration of \(TerminalSafe.quoted(name)) in \(options.domain) completed"
        switch outcome {
        case .nothingWritten:
            return ToolFailure(.signalled(signal), "\(what); nothing of it was written to the zone")
        case .withdrawn:
            return ToolFailure(.signalled(signal), "\(what); withdrew what it may have written: nothing of it is left in the zone")
        case .notWithdrawn(let names, let reason):
            let listed = names.map(TerminalSafe.quoted).joined(separator: ", ")
            // Quoted for a POSIX shell, so the line can be pasted as it is.
            let quoted = { (text: String) in "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'" }
            let named = names.count == 1 ? quoted(names[0]) : "NAME"
            return ToolFailure(.signalled(signal), "\(what), and could not withdraw what it may have written (\(reason)): \(listed) may stay in the zone; "
                               + "once the server answers, run\(names.count == 1 ? "" : " for each"): svc-publish --withdraw --name \(named) --domain \(options.domain) "
                               + "--dns-server \(settings.server) --tsig-key \(quoted(settings.keyPath))")
        }
    }
}

/// An operator's line as a command (a home path expanded), or nil after saying what is wrong
/// with it (unless `reportingMistakes` is false).
private func operatorCommand(_ line: String, reportingMistakes: Bool = true) -> RoomCommand? {
    do throws(ProtocolError) {
        return try RoomCommand(parsing: line, peerInSend: true).expandingHome(getenv("HOME").map { String(cString: $0) })
    } catch {
        if reportingMistakes { Console.note(error.message) }
        return nil
    }
}

/// Where the room's key is: `--identity`, or the user's default key.
/// - Throws: `ToolFailure` (78) when the default cannot be told.
private func identityFile(_ path: String?) throws -> String {
    do throws(SecureTransportError) {
        if let path { return path }
        return try Identity.defaultPath()
    } catch {
        throw ToolFailure(.configuration, error.message)
    }
}

/// The room's key at `file` (made on first use, and said so).
/// - Throws: `ToolFailure` (78) when the key file cannot be used.
private func loadIdentity(_ file: String) throws -> Identity {
    do throws(SecureTransportError) {
        let identity = try Identity.loadOrCreate(at: file)
        if identity.wasCreated, let path = identity.path {
            Console.note("made a new key for this user: \(path) (\(identity.fingerprint.full)); members pin it at first contact")
        }
        return identity
    } catch {
        throw ToolFailure(.configuration, error.message)
    }
}

/// The TXT record with the room's key in it (`key=`), for first contact.
private func announcing(_ identity: Identity, in txt: TXTRecord) throws -> TXTRecord {
    var txt = txt
    try txt.set(PublishOptions.keyTXTItem, Array(identity.fingerprint.full.utf8))
    return txt
}

/// What a plaintext client is told when the room requires TLS.
private let tlsRequired = "this room requires TLS 1.3 (protocol version 2); update svc-connect, or ask the publisher for --allow-plaintext"

/// Lines read from standard input that wait, in order, to be sent (text, `/msg`, `/send`)
/// behind the one waiting in `RoomServer.send`; past them nothing more is read (README, Limits).
let linesWaitingToBeSent = 16

/// How to close the room, for `/help`.
private let leaving = "to close the room: /quit or Ctrl-C (members are told and wait for it to come back); end of input (Ctrl-D) does not close it"

private extension RoomCommand {
    /// Whether the command goes to members (text, a message, a file), as against the
    /// operator's own `/quit`, `/help` and `/who`.
    var isSent: Bool {
        switch self {
        case .say, .message, .send: true
        case .who, .help, .quit: false
        }
    }
}
