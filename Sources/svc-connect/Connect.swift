import CommandLineSupport
import DNSSD
import Dispatch
import DiscoveryCore
import Glibc
import Messaging
import MessagingCore
import TransportCore
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
        var clientOptions = RoomClient.Options(instance: instance, name: options.memberName ?? defaultMemberName())
        clientOptions.timeout = options.timeout
        clientOptions.reconnect = options.reconnect
        clientOptions.backoffMaximum = options.retryMaximum
        clientOptions.heartbeatInterval = options.heartbeat
        do {
            clientOptions.inbox = try options.inbox.map { (path) throws(FileError) in try Inbox(directory: path) }
        } catch {
            throw ToolFailure(.osError, error.message)
        }
        let printer = ConnectOutput(output: EventOutput(json: options.json), serviceName: options.name)
        let client = RoomClient(options: clientOptions) { event in printer.print(event) }
        do {
            try await client.connect()
        } catch let error as DNSSDError where error.code == .noSuchName {
            throw ToolFailure(.noHost, error.message + (await namesSeen(options)))
        } catch let error as TransportError {
            throw ToolFailure(.unavailable, "'\(TerminalSafe.escape(options.name))' is not reachable; the host may have left the network (\(error))")
        } catch let error as ProtocolError {
            throw ToolFailure(.unavailable, "'\(TerminalSafe.escape(options.name))' refused us: \(TerminalSafe.escape(error.description))")
        }

        for file in options.files { client.submit(.send(to: nil, path: file)) }
        if let message = options.message { client.submit(.say(message)) }
        let signalQueue = DispatchQueue(label: "svc.connect.signals")
        if options.message != nil || !options.files.isEmpty {
            client.finish()
        } else {
            StandardInputLines.start(onLine: { line in
                do throws(ProtocolError) {
                    let command = try RoomCommand(parsing: line, peerInSend: false)
                    // Waits while the text on its way fills the window: a pipe is read only as
                    // fast as the room takes it.
                    if command == .help { Console.note(RoomCommand.summary) } else { client.submitWhenRoom(command) }
                } catch {
                    Console.note(error.message)
                }
            }, onEnd: { client.finish() })
        }
        let signals = TerminationSignals(queue: signalQueue) { _ in client.stop() }
        let outcome = await client.run()
        withExtendedLifetime(signals) {}
        switch outcome {
        case .finished, .closedByServer:
            if case .closedByServer(let reason) = outcome { Console.note("the server closed the connection (\(TerminalSafe.escape(reason)))") }
            guard printer.undelivered == 0 else {
                throw ToolFailure(.ioError, "\(printer.undelivered) item\(printer.undelivered == 1 ? " was" : "s were") not delivered")
            }
            return .success
        case .failed(let reason):
            throw ToolFailure(.ioError, "the connection to '\(TerminalSafe.escape(options.name))' broke: \(TerminalSafe.escape(reason))")
        case .interrupted:
            let undelivered = printer.undelivered
            throw ToolFailure(.interrupted, "interrupted" + (undelivered == 0 ? "; everything sent was delivered"
                : "; \(undelivered) item\(undelivered == 1 ? " was" : "s were") not delivered (listed above)"))
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
        return "; services seen: " + names.sorted().map { "'\(TerminalSafe.escape($0))'" }.joined(separator: ", ")
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
