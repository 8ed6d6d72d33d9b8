import Dispatch
import Glibc
import TransportCore

/// Reads standard input line by line on a thread of its own (blocking reads, so the
/// terminal's file flags are never changed) and hands each line to a queue.
public enum StandardInputLines {
    /// Starts reading. `onLine` runs on `queue` for each line (without its ending, invalid
    /// UTF-8 replaced); `onEnd` runs once at end of input or on a read error.
    public static func start(queue: DispatchQueue, maximumLineLength: Int = 65536,
                             onLine: @escaping @Sendable (String) -> Void, onEnd: @escaping @Sendable () -> Void) {
        let thread = DispatchQueue(label: "svc.stdin")
        thread.async {
            var framer = LineFramer(maximumLineLength: maximumLineLength)
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                do {
                    for line in try framer.feed(buffer[..<count]) {
                        let text = String(decoding: line, as: UTF8.self)
                        queue.async { onLine(text) }
                    }
                } catch {
                    Console.error("standard input: \(error); the rest of the input is ignored")
                    break
                }
            }
            if let last = framer.finish() {
                let text = String(decoding: last, as: UTF8.self)
                queue.async { onLine(text) }
            }
            queue.async { onEnd() }
        }
    }
}
