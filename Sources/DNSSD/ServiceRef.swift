import CDNSSD
import Dispatch
import DiscoveryCore

/// Owns one `DNSServiceRef` and drives it from a Dispatch read source on its socket.
///
/// - `DNSServiceProcessResult` is called only from the read source's handler, i.e. only when
///   the fd is readable and never from inside a callback (Avahi's layer deadlocks otherwise).
///   Callbacks therefore run on `queue`.
/// - `cancel()` may be called from anywhere, including a callback: it cancels the source, and
///   the cancel handler (run later on `queue`) deallocates the ref and then releases the
///   retained callback context, exactly once.
final class ServiceRef: @unchecked Sendable {
    /// Set once in `init`; used only on `queue` (in the source's handlers).
    private let ref: DNSServiceRef
    /// Created in `init`; `DispatchSource` is itself thread-safe to cancel.
    private let source: DispatchSourceRead
    /// Run on `queue` once the ref is deallocated.
    private let deallocated = DeallocationWaiters()

    /// Starts a `DNSService*` operation.
    /// - Parameters:
    ///   - queue: the serial queue on which callbacks will run.
    ///   - context: handed to the C callback as its context pointer; retained until the ref
    ///     is deallocated.
    ///   - operation: a phrase for error messages, e.g. "browsing for _p2pipp._tcp".
    ///   - onProcessError: called on `queue` when `DNSServiceProcessResult` fails (the daemon
    ///     connection broke); the ref is cancelled after it returns.
    ///   - start: calls the `DNSService*` function with the ref pointer and the context.
    /// - Throws: `DNSSDError` when the call fails at once (e.g. no daemon).
    init(
        queue: DispatchQueue,
        context: AnyObject,
        operation: String,
        onProcessError: @escaping @Sendable (DNSSDError) -> Void,
        start: (UnsafeMutablePointer<DNSServiceRef?>, UnsafeMutableRawPointer) -> DNSServiceErrorType
    ) throws(DNSSDError) {
        let retained = Unmanaged.passRetained(context)
        var newRef: DNSServiceRef?
        let started = ContinuousClock.now
        let code = start(&newRef, retained.toOpaque())
        guard code == kDNSServiceErr_NoError, let newRef else {
            retained.release()
            throw DNSSDError.reported(code, while: operation, took: ContinuousClock.now - started)
        }
        ref = newRef
        let fd = DNSServiceRefSockFD(newRef)
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        let refBox = UncheckedRef(newRef)
        source.setEventHandler { [source] in
            let result = DNSServiceProcessResult(refBox.ref)
            if result != kDNSServiceErr_NoError {
                onProcessError(DNSSDError.reported(result, while: operation))
                source.cancel()
            }
        }
        source.setCancelHandler { [deallocated] in
            DNSServiceRefDeallocate(refBox.ref)
            retained.release()
            deallocated.run()
        }
        source.resume()
    }

    /// Stops the operation. Safe to call more than once and from any thread.
    func cancel() { source.cancel() }

    /// Stops the operation and calls `completion` on `queue` once the daemon has been told
    /// (for a registration: once the service is withdrawn). Call on `queue`.
    func cancel(then completion: @escaping () -> Void) {
        deallocated.add(completion)
        source.cancel()
    }

    /// Updates the TXT record of a registration (`DNSServiceUpdateRecord` with a NULL record).
    /// Must be called on `queue`, never while the ref is being cancelled.
    func updatePrimaryTXT(_ bytes: [UInt8]) -> DNSServiceErrorType {
        bytes.withUnsafeBytes { raw in
            DNSServiceUpdateRecord(ref, nil, 0, UInt16(raw.count), raw.baseAddress, 0)
        }
    }
}

/// Closures waiting for a ref's deallocation; used only on the ref's queue.
private final class DeallocationWaiters: @unchecked Sendable {
    private var waiters: [() -> Void] = []
    private var done = false
    func add(_ waiter: @escaping () -> Void) { if done { waiter() } else { waiters.append(waiter) } }
    func run() {
        done = true
        waiters.forEach { $0() }
        waiters = []
    }
}

/// A `DNSServiceRef` carried into the source handlers, which all run on the owner's queue.
private struct UncheckedRef: @unchecked Sendable {
    let ref: DNSServiceRef
    init(_ ref: DNSServiceRef) { self.ref = ref }
}

/// The serial queue on which every DNS-SD callback in this process runs.
let dnssdQueue = DispatchQueue(label: "svc.dnssd")

/// Stops the program (in debug builds only; libdispatch's `dispatchPrecondition` says why)
/// when called off `dnssdQueue`: the check that the bridge's queue-bound types (`BrowseCore`,
/// `RegistrationCore`, `OneShot`, the resolve and address contexts) make on entry. They stay
/// `@unchecked Sendable` because C callbacks and Dispatch closures carry them to that queue;
/// this makes the rule a check, not a comment.
func assertOnDNSSDQueue() {
    assert({ dispatchPrecondition(condition: .onQueue(dnssdQueue)); return true }())
}
