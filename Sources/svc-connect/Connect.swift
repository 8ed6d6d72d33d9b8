import CommandLineSupport
import DNSSD
import Dispatch
import DiscoveryCore
import Glibc
import Messaging
import MessagingCore
import TransportCore
import Synchronization
import TransportPOSIX

@main
struct SvcConnect {
    static func main() async {
        await ToolMain.run(ConnectOptions.spec, validate: ConnectOptions.init, json: { $0.json }) { options in
            try await connect(options)
        }
    }

    static func connect(_ options: ConnectOptions) async throws -> ExitCode {
        if options.forget { return try forgetPin(options) }
        // The name as given, or the one it stands for as svc-browse shows names: from here on,
        // the instance's name (pins, reconnects and messages are about it).
        var options = options
        options.name = await matchedName(options)
        let shown = TerminalSafe.quoted(options.name)
        // A mistyped --send is reported before anyone is bothered, and nothing is sent.
        for file in options.files {
            if let problem = FileTransfers.problem(sending: file) { throw ToolFailure(.noInput, problem.message + "; nothing was sent") }
        }
        let instance = ServiceInstance(name: options.name, type: options.type, domain: options.domain)
        let trust = try ConnectTrust(options, instance: instance)
        let memberName = options.memberName ?? defaultMemberName()
        var clientOptions = RoomClient.Options(instance: instance, name: memberName)
        let interactive = options.message == nil && options.files.isEmpty
        clientOptions.interface = options.interface
        clientOptions.timeout = options.timeout
        clientOptions.reconnect = options.reconnect
        clientOptions.waitsForRoom = options.reconnect && interactive
        clientOptions.backoffMaximum = options.retryMaximum
        clientOptions.heartbeatInterval = options.heartbeat
        clientOptions.securing = trust.securing
        clientOptions.roomCode = options.roomCode
        do {
            clientOptions.inbox = try options.inbox.map { (path) throws(FileError) in try Inbox(directory: path) }
        } catch {
            throw ToolFailure(.osError, error.message)
        }
        let printer = ConnectOutput(output: EventOutput(json: options.json, timestamps: options.timestamps),
                                    serviceName: options.name, requestedName: memberName)
        // The client, its connection and its timers live on one event loop.
        let loop: EventLoop
        do {
            loop = try EventLoop(name: "svc-connect")
        } catch {
            throw ToolFailure(.osError, "cannot start the event loop: \(error)")
        }
        defer { loop.shutdown() }
        let connector = options.isUnicast ? try WideAreaConnector.make(options, loop: loop) : nil
        let client = RoomClient(options: clientOptions, loop: loop, connector: connector)
        // Events are printed as this task takes them: while it is behind, the client stops
        // reading from the room (a terminal that does not keep up slows the room's link down).
        let printing = Task {
            for await event in client.events {
                if case .roomCodeConfirmed(let session) = event { trust.roomCodeConfirmed(session) }
                if case .joined(_, let session) = event { trust.joined(session) }
                printer.print(event)
            }
        }
        do {
            do {
                try await client.connect()
            } catch {
                // What happened before the failure is printed before it.
                client.stop()
                await printing.value
                // An unusable key file is what the user must fix first, whatever else failed.
                try trust.checkIdentity()
                throw error
            }
        } catch let error as RoomClient.UntrustedServer {
            throw trust.failure(error)
        } catch let error as DNSSDError where error.code == .noSuchName {
            throw ToolFailure(.noHost, error.message + (await namesSeen(options)))
        } catch let error as TransportError where error.isRefused {
            throw ToolFailure(.temporaryFailure, "\(shown) is published, but its host refuses the connection: nothing listens on the published port (\(error)); the program that published it has probably stopped and its announcement is not withdrawn yet; try again later")
        } catch let error as TransportError {
            let through = options.interface.map { " through \($0.name) (--interface): an address reached over another interface does not answer, and" } ?? ""
            throw ToolFailure(.temporaryFailure, "\(shown) is published, but its host does not answer\(through): it may have left the network without saying so (\(error)); try again later")
        } catch let error as ProtocolError where error.code == .wrongRoomCode {
            // Only our own check of the room's tag, or a room that proved the code, says so: an
            // ERROR from a room that has not proved it arrives as a code-exchange error (76).
            throw ToolFailure(.wrongRoomCode, "\(shown) and we do not share the room code: \(error.message)")
        } catch let error as ProtocolError where error.code == .codeRequired || error.code == .notAdmitted {
            throw ToolFailure(.notAdmitted, "\(shown) did not let us in: \(error)")
        } catch let error as ProtocolError where error.code == .tooManyAttempts {
            throw ToolFailure(.temporaryFailure, "\(shown) refused the room code for now: \(error); try again later")
        } catch let error as ProtocolError where error.code == .handshakeTimeout {
            throw ToolFailure(.temporaryFailure, "\(shown) did not let us in: \(error); try again later")
        } catch let error as ProtocolError where error.code == .codeExchange {
            // The message says who refused whom: the room (not proved) or we.
            throw ToolFailure(.protocolError, "\(shown): \(error.message)")
        } catch let error as ProtocolError {
            throw ToolFailure(.protocolError, "\(shown) refused us: \(error)")
        }

        // Each waits while the text on its way fills the flow window.
        for file in options.files { await send(.send(to: nil, path: file), as: "file \(file)", to: client, printer) }
        if let message = options.message { await send(.say(message), as: message, to: client, printer) }
        let signalQueue = DispatchQueue(label: "svc.connect.signals")
        var reading: Task<Void, Never>?
        if !interactive {
            client.finish()
        } else {
            reading = readCommands(into: client)
        }
        let interruptedBy = Mutex<Int32?>(nil)
        let signals = TerminationSignals(queue: signalQueue) { number in
            interruptedBy.withLock { $0 = $0 ?? number }
            client.stop()
        }
        let outcome = await client.run()
        withExtendedLifetime(signals) {}
        reading?.cancel() // a send still waiting ends (the session is over); nothing more is read
        // Every event, up to the last line reported as not sent, is printed before the summary.
        await printing.value
        let undelivered = printer.undelivered
        let notDelivered = "\(counted(undelivered, "item was", "items were")) not delivered"
        switch outcome {
        case .finished:
            guard undelivered == 0 else { throw ToolFailure(.ioError, notDelivered) }
            return .success
        case .closedByServer(let reason):
            // The room ended the session before we did: whatever was still to come is lost.
            let what = "the room closed: the server \(reason)"
            guard undelivered == 0 else { throw ToolFailure(.ioError, "\(what); \(notDelivered)") }
            throw ToolFailure(.ioError, what + (options.reconnect ? "" : "; without --no-reconnect, svc-connect waits for it to come back"))
        case .failed(let reason):
            throw ToolFailure(.ioError, "the connection to \(shown) broke: \(reason)")
        case .untrusted(let error):
            throw trust.failure(error)
        case .interrupted:
            // Ctrl-C is the user's: 130, as shells report it. SIGTERM is a service manager's
            // orderly stop: 0 when everything was delivered, 74 when not.
            let byUser = interruptedBy.withLock { $0 } != SIGTERM
            let what = byUser ? "interrupted" : "stopped by SIGTERM"
            guard undelivered == 0 else {
                throw ToolFailure(byUser ? .interrupted : .ioError, "\(what); \(notDelivered), listed above")
            }
            // Only a room that acknowledges text confirmed it; an older one was only handed it.
            let delivered = await client.roomConfirmsText ? "everything sent was delivered"
                : "everything sent was handed to the room, which does not confirm what it received"
            if !byUser { Console.note("\(what); \(delivered)"); return .success }
            throw ToolFailure(.interrupted, "\(what); \(delivered)")
        }
    }

    /// Sends a command from the command line; one the session, ended at once (the room said
    /// GOODBYE right after WELCOME), did not take is reported as not sent.
    static func send(_ command: RoomCommand, as shown: String, to client: RoomClient, _ printer: ConnectOutput) async {
        do {
            try await client.send(command)
        } catch {
            printer.print(.notSent(shown))
        }
    }

    /// How to leave, for `/help`.
    static let leaving = "to leave: /quit or Ctrl-D (once what you typed is delivered), Ctrl-C (at once; what was not delivered is listed)"

    /// Reads standard input: each line is text for the room or a command. A mistake (an
    /// unknown command, a file that cannot be sent) is reported and changes nothing else;
    /// `/quit` ends input as Ctrl-D does, and what is typed after it is ignored. Each line
    /// waits in `send` while the room is slow: a pipe is read only as fast as the room takes
    /// it. Reading stops when the session ends (Ctrl-C, the room gone) or the task is cancelled.
    static func readCommands(into client: RoomClient) -> Task<Void, Never> {
        Task {
            for await line in StandardInputLines.lines() {
                let command: RoomCommand
                do throws(ProtocolError) {
                    command = try RoomCommand(parsing: line, peerInSend: false).expandingHome(getenv("HOME").map { String(cString: $0) })
                } catch {
                    Console.note(error.message)
                    continue
                }
                switch command {
                case .help: Console.note(RoomCommand.summary + "; " + leaving)
                case .quit: return client.finish()
                case .send(_, let path) where FileTransfers.problem(sending: path) != nil:
                    Console.note((FileTransfers.problem(sending: path)?.message ?? path) + "; nothing was sent")
                default:
                    do {
                        try await client.send(command)
                    } catch {
                        return // the session is over (its end is reported), or we were cancelled
                    }
                }
            }
            if !Task.isCancelled { client.finish() } // end of input (Ctrl-D)
        }
    }

    /// `; services seen: "a", "b"` from a short browse (at most `namesSeenBound`), to help with
    /// a misspelt name. The names are quoted as svc-browse shows them (`TerminalSafe.quoted`),
    /// so a name cannot pass for several, nor hide a character that draws nothing.
    static func namesSeen(_ options: ConnectOptions) async -> String {
        guard let names = await boundedBrowse(options, bound: namesSeenBound) else { return "" }
        let onInterface = options.interface.map { " on \($0.name)" } ?? ""
        guard !names.isEmpty else { return "; no \(options.type.baseType) services are visible in \(options.domain)\(onInterface)" }
        // Any host can announce thousands of names: the first 20 in order, and how many more.
        let sorted = names.sorted()
        let more = sorted.count > namesSeenShown ? " and \(sorted.count - namesSeenShown) more" : ""
        return "; services seen: " + sorted.prefix(namesSeenShown).map(TerminalSafe.quoted).joined(separator: ", ") + more
    }

    /// How long a failure waits at most for the list of the names that are visible, and how
    /// many of them it names.
    static let namesSeenBound = Duration.seconds(3)
    static let namesSeenShown = 20

    /// "user@host", cut to a valid member name.
    static func defaultMemberName() -> String {
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        let hostName = String(decoding: host.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let user = getenv("USER").map { String(cString: $0) } ?? getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "someone"
        var name = Substring("\(user)@\(hostName)".filter { !$0.isWhitespace })
        while name.utf8.count > 32 { name = name.dropLast() }
        return name.isEmpty ? "someone" : String(name)
    }
}
