/// What a publisher does when its instance name is already in the zone.
public enum ConflictPolicy: String, Sendable, CaseIterable {
    /// Try `Name (2)`, `Name (3)`, ... up to `maximumAttempts` names.
    case rename
    /// Give up with a `.conflict` error.
    case fail

    /// How many names `rename` tries before it gives up.
    public static let maximumAttempts = 20

    /// What to do about a name that is taken.
    public enum Decision: Sendable, Equatable {
        /// The records there are our own leftover (same host, from a publisher that is gone):
        /// replace them.
        case takeBack
        /// Register under this name instead.
        case rename(String)
        /// Stop with this error.
        case fail(UnicastDNSSDError)
    }

    /// Decides, without I/O, what to do when `name` is taken.
    /// - Parameters:
    ///   - name: the name that was refused.
    ///   - existingTargets: the SRV targets found under that name.
    ///   - ourHost: our SRV target.
    ///   - ourLeftover: whether the records are provably ours (the caller checked that the
    ///     SRV is on our host and no process of ours serves its port).
    ///   - attempt: how many names were tried so far (1 for the first).
    public func decide(name: String, existingTargets: [DNSName], ourHost: DNSName, ourLeftover: Bool, attempt: Int) -> Decision {
        if ourLeftover, !existingTargets.isEmpty, existingTargets.allSatisfy({ $0.sameName(as: ourHost) }) {
            return .takeBack
        }
        switch self {
        case .fail:
            return .fail(UnicastDNSSDError(.conflict, "the name \"\(name)\" is taken in the zone by another host; choose another --name, or use --conflict rename"))
        case .rename:
            guard attempt < Self.maximumAttempts else {
                return .fail(UnicastDNSSDError(.conflict, "\(Self.maximumAttempts) names like \"\(name)\" are taken in the zone; choose another --name"))
            }
            return .rename(Self.numbered(name, attempt + 1))
        }
    }

    /// `Name (N)`: an earlier ` (K)` suffix replaced, the base cut (on a character boundary)
    /// so the whole fits in one 63-byte DNS label.
    static func numbered(_ name: String, _ number: Int) -> String {
        var base = Substring(name)
        if base.hasSuffix(")"), let open = base.lastIndex(of: "("), open > base.startIndex,
           base[base.index(before: open)] == " ", Int(base[base.index(after: open)..<base.index(before: base.endIndex)]) != nil {
            base = base[..<base.index(before: open)]
        }
        let suffix = " (\(number))"
        while base.utf8.count + suffix.utf8.count > DNSName.maximumLabelLength { base = base.dropLast() }
        return String(base) + suffix
    }
}
