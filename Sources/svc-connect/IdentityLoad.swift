import CommandLineSupport
import Dispatch
import Glibc
import SecureTransport
import Synchronization

/// The identity, loaded from the start on a thread of its own at the kernel's lowest priority
/// (SCHED_IDLE): reading and decoding the key, building the certificate and the client's TLS
/// context take about 2.5 ms of CPU, spent while the service is being looked up.
///
/// At normal priority that thread delayed the lookup by about the CPU it used, even with a
/// core free: the tasks of the path (svc-connect's own threads, dbus-daemon, avahi-daemon)
/// that woke on its core waited for it. A SCHED_IDLE thread gives its core to any task that
/// wakes, at once, and the kernel counts a core running only it as free when it places a
/// waking task (docs/BENCHMARKS.md, row 2).
///
/// Such a thread gets almost no CPU while its core has other work, and an unprivileged
/// process cannot raise it again. So when the connection needs the identity and it is not
/// ready within `patience`, the thread that needs it loads it too, at its own priority, and
/// whichever result comes first is used (loading twice is safe: a key file is created once,
/// by a link that fails if it exists, and otherwise only read).
final class IdentityLoad: Sendable {
    /// How long a connection waits for the idle thread before loading the identity itself:
    /// about what the whole load takes on a free core.
    static let patience: DispatchTimeInterval = .milliseconds(3)

    /// SCHED_IDLE, from <linux/sched.h> (Glibc declares it only under _GNU_SOURCE).
    private static let idlePolicy: Int32 = 5

    private let path: String
    private let loaded = Mutex<Result<Identity, ToolFailure>?>(nil)
    /// Left once, by the first result.
    private let done = DispatchGroup()

    init(path: String) {
        self.path = path
        done.enter()
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let load = Unmanaged<IdentityLoad>.fromOpaque(context!).takeRetainedValue()
            // Best effort: at normal priority the load still works, only less out of the way.
            var parameters = sched_param(sched_priority: 0)
            _ = sched_setscheduler(0, IdentityLoad.idlePolicy, &parameters)
            load.finish(with: load.load())
            return nil
        }, context)
        if result == 0 {
            pthread_detach(thread)
        } else {
            // No thread to spare: load now, on the way.
            Unmanaged<IdentityLoad>.fromOpaque(context).release()
            finish(with: load())
        }
    }

    /// The identity, once loaded here or by the idle thread.
    /// - Throws: `ToolFailure` (78) when the key file cannot be used.
    func wait() throws(ToolFailure) -> Identity {
        if done.wait(timeout: .now() + Self.patience) == .timedOut {
            finish(with: load())
        }
        // Set before `leave()`, so never nil here.
        guard let result = loaded.withLock({ $0 }) else { throw ToolFailure(.configuration, "the identity was not loaded") }
        return try result.get()
    }

    /// Reads (or on first use makes) the key, and prepares the client's TLS context.
    private func load() -> Result<Identity, ToolFailure> {
        do throws(SecureTransportError) {
            let identity = try Identity.loadOrCreate(at: path)
            if identity.wasCreated, let path = identity.path {
                Console.note("made a new key for this user: \(path) (\(identity.fingerprint.full))")
            }
            try identity.prepareForConnecting()
            return .success(identity)
        } catch {
            return .failure(ToolFailure(.configuration, error.message))
        }
    }

    /// Keeps the first result and lets the waiters go; a later one is dropped.
    private func finish(with result: Result<Identity, ToolFailure>) {
        let first = loaded.withLock { loaded in
            guard case .none = loaded else { return false }
            loaded = result
            return true
        }
        if first { done.leave() }
    }
}
