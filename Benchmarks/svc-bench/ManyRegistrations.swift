import CommandLineSupport
import DNSSD
import DiscoveryCore
import Dispatch

/// Many services from one process, registered at once.
enum ManyRegistrations {
    static func run(_ options: BenchOptions) async throws -> ExitCode {
        let start = ContinuousClock.now
        let registrations = try await withThrowingTaskGroup(of: ServiceRegistration.self) { group in
            for index in 0..<options.count {
                let name = try InstanceName("\(options.prefix)-\(index)")
                group.addTask { try await ServiceRegistration.register(.init(name: name, port: 4242 + UInt16(index % 1000), timeout: options.timeout)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        report("registered", [("services", .integer(registrations.count)),
                              ("milliseconds", .integer(Int((ContinuousClock.now - start) / .milliseconds(1))))])
        let stop = AsyncStream<Int32>.makeStream()
        let signals = TerminationSignals(queue: DispatchQueue(label: "bench.signals")) { stop.continuation.yield($0) }
        for await _ in stop.stream { break }
        withExtendedLifetime(signals) {}
        for registration in registrations { await registration.cancel() }
        report("withdrawn", [("services", .integer(registrations.count))])
        return .success
    }
}
