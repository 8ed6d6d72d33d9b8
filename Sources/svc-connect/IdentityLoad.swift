import CommandLineSupport
import Dispatch
import Glibc
import SecureTransport
import Synchronization

/// The identity, loaded from the start on a thread of its own at a slightly lower priority
/// (nice 5): reading and decoding the key, building the certificate and the client's TLS
/// context take about 2.5 ms of CPU, spent while the service is being looked up.
///
/// At normal priority that thread delays the lookup by about the CPU it uses: the tasks of the
/// path (svc-connect's own threads, dbus-daemon, avahi-daemon) that wake on its core wait for
/// it. At nice 5 (weight 335 against 1024) they get the core sooner, and the thread still gets
/// a quarter of a core against one busy task, so it cannot starve: with two busy loops of the
/// same session on svc-connect's one CPU a run took as long as with main's thread (0.06-0.15 s
/// against 0.06-0.17 s), where nice 10 took up to 0.3 s, nice 19 up to 1.2 s and SCHED_IDLE up
/// to 4.3 s, since an unprivileged process cannot raise the thread again once the connection
/// needs it (docs/BENCHMARKS.md, row 2).
///
/// A thread made here, not one of libdispatch's: the nice value belongs to the thread, and a
/// worker could carry it into whatever it runs next (libdispatch sets its workers' nice values
/// by QoS, -2 for user-initiated, which only root may set; main's load ran on such a worker).
final class IdentityLoad: Sendable {
    /// The identity thread's nice value.
    static let niceValue: Int32 = 5

    private let loaded = Mutex<Result<Identity, ToolFailure>?>(nil)
    /// Left once, when the result is in.
    private let done = DispatchGroup()

    init(path: String) {
        done.enter()
        let job = Job(load: self, path: path)
        let context = Unmanaged.passRetained(job).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let job = Unmanaged<Job>.fromOpaque(context!).takeRetainedValue()
            // On Linux the nice value is the calling thread's own (who 0), not the process's.
            // Best effort: at normal priority the load still works, only less out of the way.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, IdentityLoad.niceValue)
            job.run()
            return nil
        }, context)
        if result == 0 {
            pthread_detach(thread)
        } else {
            // No thread to spare: load now, on the way.
            let job = Unmanaged<Job>.fromOpaque(context).takeRetainedValue()
            job.run()
        }
    }

    /// The identity once loaded.
    /// - Throws: `ToolFailure` (78) when the key file cannot be used.
    func wait() throws(ToolFailure) -> Identity {
        done.wait()
        // Set before `leave()`, so never nil here.
        guard let result = loaded.withLock({ $0 }) else { throw ToolFailure(.configuration, "the identity was not loaded") }
        return try result.get()
    }

    /// What the thread runs: reads (or on first use makes) the key, prepares the client's TLS
    /// context, and hands the result over.
    private final class Job: Sendable {
        let load: IdentityLoad
        let path: String

        init(load: IdentityLoad, path: String) {
            self.load = load
            self.path = path
        }

        func run() {
            let result: Result<Identity, ToolFailure>
            do throws(SecureTransportError) {
                let identity = try Identity.loadOrCreate(at: path)
                if identity.wasCreated, let path = identity.path {
                    Console.note("made a new key for this user: \(path) (\(identity.fingerprint.full))")
                }
                try identity.prepareForConnecting()
                result = .success(identity)
            } catch {
                result = .failure(ToolFailure(.configuration, error.message))
            }
            load.loaded.withLock { $0 = result }
            load.done.leave()
        }
    }
}
