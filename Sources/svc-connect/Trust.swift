import CommandLineSupport
import DiscoveryCore
import Messaging
import PeerTrust
import SecureTransport
import Synchronization
import TransportCore
import TransportPOSIX

/// What svc-connect trusts for one service: the pin in known_peers, `--fingerprint`,
/// `--strict` or the announced key (docs/PROTOCOL.md, *The secure link*), and its identity.
/// Decides each connection attempt (`securing`), pins the key after a first contact
/// (`joined`), and turns a refused key into the error to exit with (`failure`).
final class ConnectTrust: Sendable {
    private struct State {
        var policy: TrustPolicy
        /// The rule of the latest attempt over TLS.
        var expectation: TrustPolicy.Expectation?
        var plaintextNoted = false
        var joinedBefore = false
        /// The key that proved the room code on the connection being joined.
        var codeConfirmedKey: PublicKeyFingerprint?
    }

    private let instance: ServiceInstance
    private let file: KnownPeersFile
    /// Nil only with `--allow-plaintext`, which never uses TLS.
    private let identity: IdentityLoad?
    private let state: Mutex<State>

    /// Reads known_peers and the identity, and checks the options against the pin.
    /// - Throws: `ToolFailure`: 64 or 77 for options that contradict the pin or each other, 78
    ///   for a known_peers or identity file that cannot be used.
    init(_ options: ConnectOptions, instance: ServiceInstance) throws {
        self.instance = instance
        let peers: KnownPeers
        do throws(PeerTrustError) {
            file = try KnownPeersFile.standard()
            peers = try file.load()
        } catch {
            throw ToolFailure(.configuration, "known_peers cannot be used: \(error.message)")
        }
        for note in peers.warningNotes(path: file.path) { Console.note(note) }
        let policy = TrustPolicy(serviceName: TerminalSafe.escape(options.name, mode: .name), pin: peers.pin(for: instance), knownPeersPath: file.path,
                                 fingerprint: options.fingerprint, strict: options.strict, allowPlaintext: options.allowPlaintext,
                                 unreadable: peers.uncertainty(about: instance))
        if let refusal = policy.refusalBeforeLookup() { throw Self.failure(refusal) }
        state = Mutex(State(policy: policy))
        if options.allowPlaintext {
            identity = nil
        } else {
            do throws(SecureTransportError) {
                let path: String
                if let given = options.identity { path = given } else { path = try Identity.defaultPath() }
                identity = IdentityLoad(path: path)
            } catch {
                throw ToolFailure(.configuration, error.message)
            }
        }
    }

    /// Waits for the identity and says why it cannot be used: the error to exit with (78) when
    /// the key file is unusable, whatever else went wrong meanwhile; nothing otherwise.
    func checkIdentity() throws {
        _ = try identity?.wait()
    }

    /// For `RoomClient.Options.securing`: at each attempt, the policy's decision for what the
    /// service announces: refuse, plaintext, or TLS accepting only the expected key.
    var securing: RoomClient.Securing {
        { [self] service in
            let decision = state.withLock { state in
                let decision = state.policy.decide(announced: .init(txtValue: service.txt?.string(forKey: "key")))
                if case .secure(let expectation) = decision { state.expectation = expectation }
                return decision
            }
            switch decision {
            case .refuse(let refusal):
                throw RoomClient.UntrustedServer(refusal.message)
            case .plaintext(let note):
                if state.withLock({ state in defer { state.plaintextNoted = true }; return !state.plaintextNoted }) { Console.note(note) }
                return { connection, _ in connection }
            case .secure(let expectation):
                guard let identity else { throw RoomClient.UntrustedServer("no identity key was loaded for TLS") }
                return { connection, loop in
                    try TLSStream(over: connection, scheduler: loop, identity: identity.wait(),
                                  role: .client(acceptsServerKey: expectation.accepts))
                }
            }
        }
    }

    /// The room proved the room code with this session's key: the join that follows pins it
    /// without trust on first use.
    func roomCodeConfirmed(_ session: SecureSession) {
        state.withLock { $0.codeConfirmedKey = session.peerKey }
    }

    /// After a join: on first contact (or `--fingerprint`) pins the key and from then on
    /// expects only it (for this session only when the file cannot be written); says what was
    /// accepted, once.
    func joined(_ session: SecureSession?) {
        guard let session else { return }
        let (expectation, first, byCode) = state.withLock { state in
            defer {
                state.joinedBefore = true
                state.codeConfirmedKey = nil
            }
            return (state.expectation, !state.joinedBefore, state.codeConfirmedKey == session.peerKey)
        }
        guard let expectation, expectation.accepts(session.peerKey) else { return }
        guard expectation.pinsOnSuccess else {
            if first { Console.note(expectation.acceptance(of: session)) }
            return
        }
        do throws(PeerTrustError) {
            let pin = try file.pin(session.peerKey, for: instance)
            state.withLock { state in
                state.policy = state.policy.pinned(pin)
                state.expectation = nil
            }
            Console.note(byCode ? TrustPolicy.acceptanceByRoomCode(serviceName: TerminalSafe.escape(instance.name, mode: .name), of: session) : expectation.acceptance(of: session))
        } catch {
            // Not pinned, but held: every later attempt of this session expects this key.
            state.withLock { state in
                state.policy = state.policy.pinnedForSession(session.peerKey, whyNotPinned: error.message)
                state.expectation = nil
            }
            Console.note("\(TerminalSafe.quoted(instance.name)) presented \(session.peerKey.full) (short \(session.peerKey.short)), which could not be pinned in known_peers (\(error.message)): only this key is accepted for the rest of this session, and the next session is a first contact again; safety code \(session.safetyCode)")
        }
    }

    /// The error to exit with for a service we do not trust; prints the ssh-style warning
    /// first when a pinned key changed.
    func failure(_ error: RoomClient.UntrustedServer) -> ToolFailure {
        guard let presented = error.presented, let expectation = state.withLock({ $0.expectation }) else {
            return ToolFailure(.untrustedKey, error.message)
        }
        return Self.failure(expectation.rejection(of: presented))
    }

    private static func failure(_ refusal: TrustPolicy.Refusal) -> ToolFailure {
        if let warning = refusal.warning { Console.raw(warning + "\n", toStandardError: true) }
        return ToolFailure(ExitCode(refusal.exitCode), refusal.message)
    }
}
