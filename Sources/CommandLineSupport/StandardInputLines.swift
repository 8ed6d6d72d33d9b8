import Dispatch
import Glibc
import TransportCore

/// Reads standard input line by line on a thread of its own (blocking reads, so the
/// terminal's file flags are never changed).
public enum StandardInputLines {
    /// Starts reading. `onLine` runs on the reading thread for each line (without its ending,
    /// invalid UTF-8 replaced), one at a time: while it blocks, nothing more is read, which is
    /// how a slow consumer slows down a fast producer (a pipe) without buffering it. `onEnd`
    /// runs once, on the same thread, at end of input or on a read error.
    public static func start(maximumLineLength: Int = 65536,
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
                    for line in try framer.feed(buffer[..<count]) { onLine(String(decoding: line, as: UTF8.self)) }
                } catch {
                    Console.error("standard input: \(error); the rest of the input is ignored")
                    break
                }
            }
            if let last = framer.finish() { onLine(String(decoding: last, as: UTF8.self)) }
            onEnd()
        }
    }
}
