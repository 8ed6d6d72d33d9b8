import Dispatch
import Glibc

/// Turns SIGINT and SIGTERM into a handler call on a queue, and ignores SIGPIPE so that a
/// closed peer shows up as an EPIPE error instead of killing the process.
/// The sources are only created in `init` and cancelled in `deinit`.
public final class TerminationSignals: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    /// - Parameter handler: called on `queue` with the signal number, for every signal.
    public init(queue: DispatchQueue, handler: @escaping @Sendable (Int32) -> Void) {
        signal(SIGPIPE, SIG_IGN)
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    deinit { sources.forEach { $0.cancel() } }
}
