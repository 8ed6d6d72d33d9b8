import CommandLineSupport
import DNSSD
import Dispatch
import TransportPOSIX

@main
struct SvcPublish {
    static func main() async {
        await ToolMain.run(PublishOptions.spec, validate: PublishOptions.init) { options in
            try await publish(options)
        }
    }

    /// Listens, registers, serves until SIGINT/SIGTERM, then withdraws the service.
    static func publish(_ options: PublishOptions) async throws -> ExitCode {
        let output = EventOutput(json: options.json)
        let listener: TCPListener
        do {
            listener = try TCPListener(port: options.port)
        } catch {
            throw ToolFailure(.osError, "cannot listen on TCP port \(options.port): \(error)")
        }
        let registration = try await ServiceRegistration.register(.init(
            name: options.name, type: options.type, domain: options.domain, port: listener.port,
            txt: options.txt, conflictPolicy: options.conflictPolicy))
        let name = registration.name
        output.emit("registered", text: "registered \"\(TerminalSafe.escape(name))\" \(options.type.baseType) \(options.domain) port \(listener.port)", [
            ("name", .string(name)), ("type", .string(options.type.baseType)),
            ("domain", .string(options.domain.name)), ("port", .integer(Int(listener.port))),
        ])

        let queue = DispatchQueue(label: "svc.publish")
        let server = PublishServer(name: name, queue: queue, output: output)
        listener.start(queue: queue, onError: { error in Console.note("accepting a connection failed: \(error)") }) { socket, peer in
            server.accept(socket, peer: peer)
        }
        StandardInputLines.start(queue: queue, onLine: server.broadcast, onEnd: {})

        let failure = await withCheckedContinuation { (stopped: CheckedContinuation<DNSSDError?, Never>) in
            let once = ResumeOnce(stopped)
            let signals = TerminationSignals(queue: queue) { _ in once.resume(nil) }
            Task {
                for await event in registration.events {
                    switch event {
                    case .renamed(let newName):
                        queue.async { server.rename(newName) }
                        output.emit("renamed", text: "renamed \"\(TerminalSafe.escape(newName))\"", [("name", .string(newName))])
                    case .restored(let newName):
                        queue.async { server.rename(newName) }
                        output.emit("restored", text: "registered again as \"\(TerminalSafe.escape(newName))\"", [("name", .string(newName))])
                    case .daemonLost(let error):
                        Console.note("\(error.message); the service will be registered again when it is back")
                    case .failed(let error):
                        once.resume(error)
                    }
                }
                withExtendedLifetime(signals) {}
            }
        }
        await registration.cancel()
        listener.cancel()
        await server.closeAll(within: .seconds(2))
        if let failure { throw failure }
        return .success
    }
}

/// Resumes a continuation the first time only.
private final class ResumeOnce<Value: Sendable>: @unchecked Sendable {
    private let lock = DispatchQueue(label: "svc.once")
    private var continuation: CheckedContinuation<Value, Never>?
    init(_ continuation: CheckedContinuation<Value, Never>) { self.continuation = continuation }
    func resume(_ value: Value) {
        lock.sync {
            continuation?.resume(returning: value)
            continuation = nil
        }
    }
}
