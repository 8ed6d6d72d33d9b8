import CommandLineSupport
import Synchronization
import UnicastDNSSD

extension WideAreaPublication {
    /// The first registration was cancelled (SIGINT or SIGTERM) before it completed: an update
    /// may have been applied by the server even though its answer never came.
    struct Interrupted: Error {
        /// The instance under every name an update was sent for that may have been applied
        /// (the name, then renamed ones; not a name whose update the server refused as taken).
        let tried: [UnicastDNSSD.ServiceInstance]
        let directory: UnicastServiceDirectory<LDNSServer>
    }

    /// The most time an interrupted registration spends withdrawing what it may have written.
    static let interruptedWithdrawalBound: Duration = .seconds(5)

    /// What became of the records of an interrupted registration.
    enum InterruptedOutcome {
        /// No update had been sent, or the server refused each one sent on its prerequisite
        /// (the name was taken): nothing was written.
        case nothingWritten
        /// Every name an update was sent for holds none of our records now.
        case withdrawn
        /// These names may still hold our records.
        case notWithdrawn([String], reason: String)
    }

    /// Withdraws what the interrupted registration may have written, in a task of its own (the
    /// registering one is cancelled), for at most `interruptedWithdrawalBound`; a further
    /// signal gives up at once. Each withdrawal removes the records only if our SRV (our host,
    /// our port) is there, so a name someone else holds is left alone.
    static func withdraw(_ interrupted: Interrupted, interruption: Interruption) async -> InterruptedOutcome {
        guard !interrupted.tried.isEmpty else { return .nothingWritten }
        /// Why the withdrawal was given up, set by whichever gave it up first.
        let givenUp = Mutex<String?>(nil)
        let work = Task { () -> InterruptedOutcome in
            for (index, instance) in interrupted.tried.enumerated() {
                do throws(UnicastDNSSDError) {
                    try await interrupted.directory.withdraw(instance)
                } catch {
                    let reason = error.code == .cancelled ? givenUp.withLock { $0 } ?? error.description : error.description
                    return .notWithdrawn(interrupted.tried[index...].map(\.instanceName), reason: reason)
                }
            }
            return .withdrawn
        }
        let giveUp = { @Sendable (reason: String) in
            givenUp.withLock { $0 = $0 ?? reason }
            work.cancel()
        }
        let timer = Task {
            try await Task.sleep(for: interruptedWithdrawalBound)
            giveUp("gave up after \(interruptedWithdrawalBound.components.seconds) s")
        }
        // The signal that came already started this; only a further one gives up.
        interruption.onFurtherSignal { giveUp("gave up on a second signal") }
        let outcome = await work.value
        timer.cancel()
        return outcome
    }
}
