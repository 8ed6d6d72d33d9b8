/// What the live self-test did: each step that succeeded, and the one that failed.
public struct SelfTestFacts: Sendable, Hashable {
    /// The self-test's steps, in order.
    public enum Step: String, Sendable, Hashable {
        case listen, publish, browse, resolve, lookUp = "address lookup", connect
    }

    /// A step and what it gave, e.g. (.publish, "'svc-doctor 1234' on TCP port 40001").
    public struct Outcome: Sendable, Hashable {
        public var step: Step
        public var detail: String
        public init(_ step: Step, _ detail: String) {
            self.step = step
            self.detail = detail
        }
    }

    public var completed: [Outcome] = []
    /// The step that failed and why, or nil when every step passed.
    public var failure: Outcome?
    /// How often the probe's name was taken by another host while publishing it: when
    /// publishing failed after that, the network, not the daemon, is to blame.
    public var probeRenames = 0

    public init() {}
}

extension Finding {
    /// Check 7: a probe service published through the daemon is found, resolved and
    /// connected to through it.
    public static func selfTest(_ facts: SelfTestFacts) -> Finding {
        let title = "live self-test"
        let observed = facts.completed.map { "\($0.step.rawValue): \($0.detail)" }
            + (facts.failure.map { ["\($0.step.rawValue) failed: \($0.detail)"] } ?? [])
        guard let failure = facts.failure else {
            return Finding(check: "self-test", title: title, status: .ok,
                           summary: "a probe service was published, found, resolved and connected to", observed: observed)
        }
        if failure.step == .publish && facts.probeRenames > 0 {
            return Finding(check: "self-test", title: title, status: .problem,
                           summary: "another host on the network answers for the probe's name (renamed \(facts.probeRenames) time\(facts.probeRenames == 1 ? "" : "s"))",
                           observed: observed,
                           fixes: ["find the host that answers for names it does not own (e.g. 'tcpdump -n udp port 5353' shows its address) and stop it, then run svc-doctor again"])
        }
        let fixes: [String]
        switch failure.step {
        case .listen: fixes = ["free a TCP port for the probe (see the error above)"]
        case .publish:
            // Avahi renames a conflicting service without a word to the client, and the browse
            // that witnesses the renames (`probeRenames`) may see none of them in time.
            fixes = ["fix the bus and avahi-daemon checks above, then run svc-doctor again",
                     "if they are ok, another host on the network may be answering for the probe's name ('tcpdump -n udp port 5353' shows its address): stop it, then run svc-doctor again"]
        case .browse, .resolve, .lookUp:
            fixes = ["fix the interfaces and responders checks above, then run svc-doctor again"]
        case .connect: fixes = ["allow incoming TCP to the probe's port on this host (see the firewall check), then run svc-doctor again"]
        }
        return Finding(check: "self-test", title: title, status: .problem,
                       summary: "the self-test failed at \(failure.step.rawValue): discovery does not work end to end",
                       observed: observed, fixes: fixes)
    }
}
