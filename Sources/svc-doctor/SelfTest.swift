import DNSSD
import DiscoveryCore
import Glibc
import HostDiagnosis
import TransportCore
import TransportPOSIX

/// The live self-test: listens on a free TCP port, publishes a probe service on it through
/// avahi-daemon, browses for it, resolves it, looks up its addresses and connects to it, all
/// through the daemon, then withdraws it. Every step shares one deadline, so it never hangs.
enum SelfTest {
    /// - Parameter interface: publish, browse and resolve on this interface only (nil: every one).
    static func run(timeout: Duration, interface: NetworkInterface?) async -> SelfTestFacts {
        var facts = SelfTestFacts()
        let deadline = ContinuousClock.now + timeout
        var step = SelfTestFacts.Step.listen
        var registration: ServiceRegistration?
        var listener: TCPListener?
        var loop: EventLoop?
        do {
            let tcp = try TCPListener(port: 0)
            listener = tcp
            let probeLoop = try EventLoop(name: "svc-doctor")
            loop = probeLoop
            tcp.start(on: probeLoop) { socket, _ in socket.close() }
            facts.completed.append(.init(.listen, "TCP port \(tcp.port)"))

            step = .publish
            // The probe's own type, which no other program browses.
            let serviceType = try ServiceType("_svc-doctor._tcp")
            let name = try InstanceName("svc-doctor probe \(getpid())")
            let registered = try await registerProbe(name: name, type: serviceType, port: tcp.port, interface: interface, deadline: deadline)
            registration = registered
            facts.completed.append(.init(.publish, "'\(registered.name)' (\(serviceType.baseType)) on TCP port \(tcp.port)"))

            step = .browse
            let (instance, interfaces) = try await withDeadline(deadline, "browsing \(serviceType.baseType) did not find the probe") {
                for try await event in try await ServiceBrowser(type: serviceType, interface: interface).start() {
                    if case .added(let instance, let interfaces) = event, instance.name == registered.name { return (instance, interfaces) }
                }
                throw CancellationError()
            }
            facts.completed.append(.init(.browse, "found on \(interfaces.map(\.name).joined(separator: ", "))"))

            step = .resolve
            let resolved = try await instance.resolve(interfaceIndex: interfaces.first?.index ?? 0, timeout: remaining(deadline))
            facts.completed.append(.init(.resolve, "\(resolved.hostTarget):\(resolved.port) on \(resolved.interface.name)"))

            step = .lookUp
            let endpoints = try await resolved.lookUpAddresses(timeout: remaining(deadline))
            facts.completed.append(.init(.lookUp, endpoints.map(\.description).joined(separator: " ")))

            step = .connect
            let started = ContinuousClock.now
            let (socket, endpoint) = try await TCPConnector.connect(to: endpoints, timeout: remaining(deadline), on: probeLoop)
            socket.close()
            let milliseconds = (ContinuousClock.now - started).components.attoseconds / 1_000_000_000_000_000
            facts.completed.append(.init(.connect, "connected to \(endpoint) in \(milliseconds) ms"))
        } catch {
            facts.failure = .init(step, "\(error)")
            facts.probeRenames = (error as? ProbeNameTaken)?.renames ?? 0
        }
        await registration?.cancel()
        listener?.cancel()
        loop?.shutdown()
        return facts
    }

    /// Registers the probe (renaming it after conflicts, " #2", " #3", ...), browsing the
    /// probe's type meanwhile: Avahi renames a conflicting service by itself, without a word to
    /// the client, so the names of the probe that other hosts answer for are how a conflict
    /// shows. When publishing then fails, that host is to blame, not the daemon.
    static func registerProbe(name: InstanceName, type: ServiceType, port: UInt16, interface: NetworkInterface?,
                              deadline: ContinuousClock.Instant) async throws -> ServiceRegistration {
        let watcher = Task { () -> Set<String> in
            var taken: Set<String> = []
            do {
                for try await event in try await ServiceBrowser(type: type, interface: interface).start() {
                    if case .added(let instance, _) = event, isProbeName(instance.name, base: name.value), taken.count < 1000 {
                        taken.insert(instance.name)
                    }
                }
            } catch {
                // Browsing is only a witness here: without it, a failure is reported as it came.
            }
            return taken
        }
        defer { watcher.cancel() }
        do {
            return try await ServiceRegistration.register(.init(
                name: name, type: type, port: port, interface: interface, conflictPolicy: .rename, timeout: remaining(deadline)))
        } catch {
            watcher.cancel()
            let taken = await watcher.value
            if taken.isEmpty { throw error }
            throw ProbeNameTaken(name: name.value, renames: taken.count)
        }
    }

    /// Whether `candidate` is `base` or one of its alternatives (`base #N`).
    static func isProbeName(_ candidate: String, base: String) -> Bool {
        guard candidate.hasPrefix(base) else { return false }
        let rest = candidate.dropFirst(base.count)
        guard !rest.isEmpty else { return true }
        guard rest.hasPrefix(" #") else { return false }
        let digits = rest.dropFirst(2)
        return !digits.isEmpty && digits.count <= 9 && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// Another host kept answering for the probe's names.
    struct ProbeNameTaken: Error, CustomStringConvertible {
        let name: String
        let renames: Int
        var description: String {
            "another host on the network answers for the probe's name '\(name)' (renamed \(renames) time\(renames == 1 ? "" : "s"))"
        }
    }

    /// What is left until `deadline`, at least 10 ms (a step given nothing fails at once).
    static func remaining(_ deadline: ContinuousClock.Instant) -> Duration {
        max(.milliseconds(10), deadline - .now)
    }

    /// Runs `body` until `deadline`; then cancels it and throws a timeout saying `what`.
    static func withDeadline<Value: Sendable>(_ deadline: ContinuousClock.Instant, _ what: String,
                                               _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await withThrowingTaskGroup(of: Value.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(until: deadline)
                throw StepTimeout(message: "\(what) in time")
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw CancellationError() }
            return first
        }
    }

    struct StepTimeout: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}
