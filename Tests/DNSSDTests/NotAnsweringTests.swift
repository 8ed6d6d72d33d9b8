import CAvahiClient
@testable import DNSSD
import Dispatch
import Synchronization
import XCTest

/// A call that blocks on D-Bus can be given up on, and what is said when avahi-daemon does not
/// answer (hung, stopped by SIGSTOP, overloaded) is told apart from "not running".
final class NotAnsweringTests: XCTestCase {
    private let queue = DispatchQueue(label: "test.blocking-call")

    /// The await ends at once on cancellation while the call still blocks; the call's value,
    /// when it comes, goes to `abandon` (a browse is cancelled), and nothing is resumed twice.
    func testCancellationEndsTheWaitAndTheLateValueIsAbandoned() async throws {
        let queue = queue
        let release = DispatchSemaphore(value: 0)
        let began = DispatchSemaphore(value: 0)
        let (abandoned, abandon) = AsyncStream<Int>.makeStream()
        let waiting = Task {
            try await AbandonableCall.run(on: queue, {
                began.signal()
                release.wait()
                return 42
            }, abandon: { abandon.yield($0); abandon.finish() })
        }
        await Task.detached { began.wait() }.value
        waiting.cancel()
        await assertCancelled(waiting)
        release.signal()
        var values: [Int] = []
        for await value in abandoned { values.append(value) }
        XCTAssertEqual(values, [42])
    }

    func testACallThatEndsGivesItsValueAndIsNotAbandoned() async throws {
        let abandonedCount = Atomic<Int>(0)
        let value = try await AbandonableCall.run(on: queue, { 7 }, abandon: { _ in abandonedCount.add(1, ordering: .relaxed) })
        XCTAssertEqual(value, 7)
        await withCheckedContinuation { done in queue.async { done.resume() } }
        XCTAssertEqual(abandonedCount.load(ordering: .relaxed), 0)
    }

    func testACallsErrorIsThrown() async {
        struct Failure: Error {}
        do {
            _ = try await AbandonableCall.run(on: queue, { () throws -> Int in throw Failure() }, abandon: { _ in })
            XCTFail("no error")
        } catch {
            XCTAssertTrue(error is Failure, "\(error)")
        }
    }

    /// A task cancelled before the call began does not make it: nothing is left to undo.
    func testACallAbandonedBeforeItBeganIsNotMade() async throws {
        let queue = queue
        let made = Atomic<Bool>(false)
        let hold = DispatchSemaphore(value: 0)
        queue.async { hold.wait() } // the queue is busy, as with a browse blocked ahead of it
        let waiting = Task {
            try await AbandonableCall.run(on: queue, { made.store(true, ordering: .relaxed); return 1 }, abandon: { _ in })
        }
        waiting.cancel()
        await assertCancelled(waiting)
        hold.signal()
        await withCheckedContinuation { done in queue.async { done.resume() } }
        XCTAssertFalse(made.load(ordering: .relaxed))
    }

    /// The cancelled wait ends with `CancellationError`, not the call's value.
    func assertCancelled(_ waiting: Task<Int, any Error>, line: UInt = #line) async {
        do {
            _ = try await waiting.value
            XCTFail("a cancelled wait returned the call's value", line: line)
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)", line: line)
        }
    }

    // MARK: - What is said

    let operation = "browsing for _p2pipp._tcp in local."

    func testTheMessageSaysTheDaemonDidNotAnswerAndWhatToDo() {
        let error = DNSSDError.notAnswering(while: operation, within: .seconds(3), busAddress: "/run/dbus/x")
        XCTAssertEqual(error.code, .timedOut)
        XCTAssertTrue(error.message.hasPrefix("avahi-daemon did not answer over the D-Bus system bus at /run/dbus/x within 3 s, so \(operation) failed"), error.message)
        XCTAssertTrue(error.message.contains("hung, stopped or overloaded"), error.message)
        XCTAssertTrue(error.message.contains("avahi-browse -a -t"), error.message)
        XCTAssertTrue(error.message.contains("systemctl status avahi-daemon"), error.message)
        XCTAssertTrue(error.message.contains("service avahi-daemon restart"), error.message)
        XCTAssertFalse(error.message.contains("not running"), error.message)
    }

    /// Avahi's dns_sd layer fails a browse with kDNSServiceErr_Unknown after D-Bus's 25 s reply
    /// timeout: a daemon that did not answer, said without asking it again for 25 s more.
    func testASlowUnknownIsADaemonThatDidNotAnswer() {
        var asked = 0
        let error = DNSSDError.daemon(-65537, while: operation, bus: .reachable(address: "/run/dbus/x"), took: .seconds(25),
                                      daemon: { asked += 1; return .absent })
        XCTAssertEqual(error.code, .timedOut)
        XCTAssertEqual(asked, 0)
        XCTAssertTrue(error.message.hasPrefix("avahi-daemon did not answer over the D-Bus system bus at /run/dbus/x within 25 s"), error.message)
        XCTAssertEqual(error.rawValue, -65537)
    }

    /// At once, the same code is a daemon that is not running (D-Bus says so without waiting).
    func testAFastUnknownIsStillADaemonThatIsNotRunning() {
        let error = DNSSDError.daemon(-65537, while: operation, bus: .reachable(address: "/run/dbus/x"), took: .milliseconds(3), daemon: { .absent })
        XCTAssertEqual(error.code, .daemonUnreachable)
        XCTAssertTrue(error.message.hasPrefix("avahi-daemon is not running"), error.message)
    }

    /// The probe that asks the daemon tells a late "no daemon" from a prompt one.
    func testAProbeThatGotNoAnswerIsNotReadAsNotRunning() {
        let error = DNSSDError.daemon(-65537, while: operation, bus: .reachable(address: "/run/dbus/x"), daemon: { .notAnswering(after: .seconds(25)) })
        XCTAssertEqual(error.code, .timedOut)
        XCTAssertTrue(error.message.contains("did not answer"), error.message)
        XCTAssertFalse(error.message.contains("not running"), error.message)
    }

    /// Resolves and address lookups connect through libavahi-client, which says
    /// AVAHI_ERR_NO_DAEMON both at once (not running) and after 25 s (no answer).
    func testALateNoDaemonFromTheClientLibraryIsADaemonThatDidNotAnswer() {
        let late = DNSSDError.daemon(DaemonFailure(stage: .connecting, code: Int32(AVAHI_ERR_NO_DAEMON), bus: .reachable(address: "/run/dbus/x"),
                                                   took: .seconds(25)), while: operation)
        XCTAssertEqual(late.code, .timedOut)
        XCTAssertTrue(late.message.hasPrefix("avahi-daemon did not answer over the D-Bus system bus at /run/dbus/x within 25 s"), late.message)
        let prompt = DNSSDError.daemon(DaemonFailure(stage: .connecting, code: Int32(AVAHI_ERR_NO_DAEMON), bus: .reachable(address: "/run/dbus/x"),
                                                     took: .milliseconds(2)), while: operation)
        XCTAssertEqual(prompt.code, .daemonUnreachable)
        XCTAssertTrue(prompt.message.hasPrefix("avahi-daemon is not running"), prompt.message)
    }
}
