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
        await ToolMain.run(ConnectOptions.spec, validate: ConnectOptions.init) { options in
            try await connect(options)
        }
    }

    static func connect(_ options: ConnectOptions) async throws -> ExitCode {
        let instance = ServiceInstance(name: options.name, type: options.type, domain: options.domain)
        let memberName = options.memberName ?? defaultMemberName()
        var clientOptions = RoomClient.Options(instance: instance, name: memberName)
        clientOptions.timeout = options.timeout
        clientOptions.reconnect = options.reconnect
        clientOptions.backoffMaximum = options.retryMaximum
        clientOptions.heartbeatInterval = options.heartbeat
        do {
            clientOptions.inbox = try options.inbox.map { (path) throws(FileError) in try Inbox(directory: path) }
        } catch {
            throw ToolFailure(.osError, error.message)
        }
        let printer = ConnectOutput(output: EventOutput(json: options.json, timestamps: options.timestamps),
                                    serviceName: options.name, requestedName: memberName)
        let client = RoomClient(options: clientOptions) { event in printer.print(event) }
        do {
            try await client.connect()
        } catch let error as DNSSDError where error.code == .noSuchName {
            throw ToolFailure(.noHost, error.message + (await namesSeen(options)))
        } catch let error as TransportError {
            throw ToolFailure(.unavailable, "'\(options.name)' is not reachable, the host may have left the network: \(error)")
        } catch let error as ProtocolError {
            throw ToolFailure(.unavailable, "'\(options.name)' refused us: \(error)")
        }

        for file in options.files { client.submit(.send(to: nil, path: file)) }
        if let message = options.message { client.submit(.say(message)) }
        let signalQueue = DispatchQueue(label: "svc.connect.signals")
        if options.message != nil || !options.files.isEmpty {
            client.finish()
        } else {
            StandardInputLines.start(onLine: { line in
                do throws(ProtocolError) {
                    let command = try RoomCommand(parsing: line, peerInSend: false).expandingHome(getenv("HOME").map { String(cString: $0) })
                    // Waits while the text on its way fills the window: a pipe is read only as
                    // fast as the room takes it.
                    if command == .help { Console.note(RoomCommand.summary) } else { client.submitWhenRoom(command) }
                } catch {
                    Console.note(error.message)
                }
            }, onEnd: { client.finish() })
        }
        let interruptedBy = Mutex<Int32?>(nil)
        let signals = TerminationSignals(queue: signalQueue) { number in
            interruptedBy.withLock { $0 = $0 ?? number }
            client.stop()
        }
        let outcome = await client.run()
        withExtendedLifetime(signals) {}
        switch outcome {
        case .finished, .closedByServer:
            if case .closedByServer(let reason) = outcome { Console.note("the server closed the connection: \(TerminalSafe.escape(reason))") }
            guard printer.undelivered == 0 else {
                throw ToolFailure(.ioError, "\(counted(printer.undelivered, "item was", "items were")) not delivered")
            }
            return .success
        case .failed(let reason):
            throw ToolFailure(.ioError, "the connection to '\(options.name)' broke: \(reason)")
        case .interrupted:
            // Ctrl-C is the user's: 130, as shells report it. SIGTERM is a service manager's
            // orderly stop: 0 when everything was delivered, 74 when not.
            let undelivered = printer.undelivered
            let byUser = interruptedBy.withLock { $0 } != SIGTERM
            let what = byUser ? "interrupted" : "stopped by SIGTERM"
            guard undelivered == 0 else {
                throw ToolFailure(byUser ? .interrupted : .ioError,
                                  "\(what); \(counted(undelivered, "item was", "items were")) not delivered, listed above")
            }
            if !byUser { Console.note("\(what); everything sent was delivered"); return .success }
            throw ToolFailure(.interrupted, "\(what); everything sent was delivered")
        }
    }

    /// ", services seen: 'a', 'b'" from a short browse, to help with a misspelt name.
    static func namesSeen(_ options: ConnectOptions) async -> String {
        guard let events = try? ServiceBrowser(type: options.type, domain: options.domain).start() else { return "" }
        var names: [String] = []
        do {
            for try await event in events {
                if case .added(let instance, _) = event { names.append(instance.name) }
                if event == .completeForNow { break }
            }
        } catch {}
        guard !names.isEmpty else { return "; no \(options.type.baseType) services are visible in \(options.domain)" }
        return "; services seen: " + names.sorted().map { "'\($0)'" }.joined(separator: ", ")
    }

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
