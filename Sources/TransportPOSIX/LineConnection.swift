import Dispatch
import TransportCore

/// A connection that carries lines of text (UTF-8, ending in `\n`), at most
/// `maximumLineLength` bytes each.
///
/// - Important: like `Connection`, every method runs on the connection's queue and so do the
///   handlers.
public final class LineConnection: @unchecked Sendable {
    public let connection: Connection
    private var framer: LineFramer

    public init(_ connection: Connection, maximumLineLength: Int = 65536) {
        self.connection = connection
        framer = LineFramer(maximumLineLength: maximumLineLength)
    }

    /// Starts reading. `onLine` gets each line without its ending (a last line without one is
    /// delivered at EOF); `onClose` is called once. The connection keeps this object alive
    /// until it closes.
    public func start(onLine: @escaping (String) -> Void, onClose: @escaping (Connection.CloseReason) -> Void) {
        connection.start(onBytes: { [self] bytes in
            do throws(LineFramer.LineTooLong) {
                for line in try framer.feed(bytes) { onLine(String(decoding: line, as: UTF8.self)) }
            } catch {
                connection.close(because: TransportError("read", message: error.description))
            }
        }, onClose: { [self] reason in
            if reason == .closedByPeer, let last = framer.finish() { onLine(String(decoding: last, as: UTF8.self)) }
            onClose(reason)
        })
    }

    /// Sends `text` followed by `\n`. Returns false when the connection cannot take it.
    @discardableResult
    public func send(line text: String) -> Bool {
        connection.send(Array(text.utf8) + [UInt8(ascii: "\n")])
    }
}
