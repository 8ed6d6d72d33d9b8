import CommandLineSupport
import Dispatch
import TransportCore
import TransportPOSIX

/// One connection from svc-connect: greets, relays lines both ways, and ends when the server
/// closes, standard input ends (or `--message` is sent), or a signal arrives.
/// - Important: every field is used only on `queue`.
final class ClientSession: @unchecked Sendable {
    private let queue = DispatchQueue(label: "svc.connect.session")
    private let lines: LineConnection
    private let options: ConnectOptions
    private var finished: CheckedContinuation<ExitCode, Never>?
    /// How long the server may take to close after we finished sending.
    private let closeGrace: Duration = .seconds(5)

    init(socket: Socket, peer: SocketEndpoint, options: ConnectOptions) {
        lines = LineConnection(Connection(socket: socket, peer: peer, queue: queue))
        self.options = options
    }

    func run() async -> ExitCode {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                finished = continuation
                start()
            }
        }
    }

    private func start() {
        let signals = TerminationSignals(queue: queue) { [self] _ in finishSending() }
        lines.start(onLine: { line in
            Console.out(TerminalSafe.escape(line))
        }, onClose: { [self] reason in
            withExtendedLifetime(signals) {}
            switch reason {
            case .closedByPeer, .closedLocally:
                Console.note("the connection is closed")
                end(.success)
            case .reset, .failed:
                Console.error("the connection to '\(TerminalSafe.escape(options.name))' \(reason)")
                end(.ioError)
            }
        })
        lines.send(line: clientGreeting())
        if let message = options.message {
            lines.send(line: message)
            finishSending()
        } else {
            StandardInputLines.start(queue: queue, onLine: { [self] line in
                if !lines.send(line: line) { Console.note("not sent, the connection is closing: \(TerminalSafe.escape(line))") }
            }, onEnd: { [self] in finishSending() })
        }
    }

    /// Sends what is queued and tells the server we are done; it closes in turn.
    private func finishSending() {
        lines.connection.finish()
        queue.asyncAfter(deadline: .now() + .seconds(Int(closeGrace.components.seconds))) { [self] in
            guard finished != nil else { return }
            Console.note("the server did not close the connection within \(closeGrace); closing it")
            lines.connection.close()
        }
    }

    private func end(_ code: ExitCode) {
        finished?.resume(returning: code)
        finished = nil
    }
}
