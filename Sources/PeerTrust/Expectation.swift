import TransportCore

extension TrustPolicy {
    /// The key a TLS handshake must see, and what to say about it afterwards.
    ///
    /// The handshake's policy closure is `accepts`; when it says no, the handshake is aborted
    /// before any frame and `rejection(of:)` is the error to end with. When it says yes and
    /// `pinsOnSuccess`, the caller pins the presented key (`KnownPeersFile.pin`), switches to
    /// `TrustPolicy.pinned(_:)` for reconnects, and prints `acceptance(of:)`.
    public struct Expectation: Sendable, Hashable {
        public enum Rule: Sendable, Hashable {
            /// The pin from known_peers.
            case pinned(KnownPeers.Pin)
            /// `--fingerprint`: a full or shortened key.
            case fingerprint(String)
            /// First contact: the key from the TXT record.
            case announced(PublicKeyFingerprint)
            /// The key this session accepted first, which could not be pinned in the file.
            case session(PublicKeyFingerprint, whyNotPinned: String)
        }

        struct Context: Sendable, Hashable {
            let serviceName: String
            let knownPeersPath: String
        }

        public let rule: Rule
        let context: Context

        /// Whether the handshake may go on with the key the service presented.
        public func accepts(_ presented: PublicKeyFingerprint) -> Bool {
            switch rule {
            case .pinned(let pin): presented == pin.key
            case .fingerprint(let text): presented.matches(text)
            case .announced(let key): presented == key
            case .session(let key, _): presented == key
            }
        }

        /// Whether the key is to be pinned once the handshake succeeds: on first contact and
        /// with `--fingerprint`, not when it is pinned already.
        public var pinsOnSuccess: Bool {
            switch rule {
            case .pinned, .session: false
            case .fingerprint, .announced: true
            }
        }

        /// The error for a presented key that `accepts` refused (exit 77): the key-changed
        /// warning for a pin, else which key was expected and which came.
        public func rejection(of presented: PublicKeyFingerprint) -> Refusal {
            let name = context.serviceName
            switch rule {
            case .pinned(let pin):
                return Refusal(kind: .untrusted,
                               message: "the key of '\(name)' has changed: it presented \(presented.full), not its pinned \(pin.key.full) ('\(context.knownPeersPath)' line \(pin.lineNumber)); nothing was sent. If its publisher really has a new key, run \(TrustPolicy.forgetCommand(name)) and connect again",
                               warning: TrustPolicy.keyChangedWarning(serviceName: name, pinned: pin, presented: presented,
                                                                      knownPeersPath: context.knownPeersPath))
            case .fingerprint(let text):
                return Refusal(kind: .untrusted, message: "'\(name)' presented the key \(presented.full), which does not match --fingerprint \(text): someone may be answering in its place, or the fingerprint is mistyped; nothing was sent. Compare it with the key svc-publish shows")
            case .announced(let key):
                return Refusal(kind: .untrusted, message: "'\(name)' presented the key \(presented.full), not the key its announcement (TXT key=) names, \(key.full): someone may be answering in its place; nothing was sent and nothing was pinned. If you know its key, give it with --fingerprint (svc-publish shows it)")
            case .session(let key, let whyNotPinned):
                return Refusal(kind: .untrusted, message: "the key of '\(name)' changed during this session: it presented \(presented.full), not \(key.full), the key it had when this session joined it (that key was not pinned: \(whyNotPinned)); nothing was sent. If its publisher really has a new key, connect again")
            }
        }

        /// What to print once the handshake succeeded (after the pin was written, when
        /// `pinsOnSuccess`).
        public func acceptance(of session: SecureSession) -> String {
            let name = context.serviceName
            let key = session.peerKey
            switch rule {
            case .pinned(let pin):
                return "'\(name)' presented its pinned key \(key.short) ('\(context.knownPeersPath)' line \(pin.lineNumber)); safety code \(session.safetyCode)"
            case .fingerprint:
                return "'\(name)' presented the key given with --fingerprint: pinned it, \(key.full) (short \(key.short)); safety code \(session.safetyCode)"
            case .session:
                return "'\(name)' presented the key this session joined it with, \(key.short) (not pinned); safety code \(session.safetyCode)"
            case .announced:
                return "first contact with '\(name)': pinned its key \(key.full) (short \(key.short)); safety code \(session.safetyCode): compare it with the publisher's screen to be sure nobody is in between"
            }
        }
    }

    /// What to print once a key that proved the room code (svc-connect --room-code) was
    /// pinned: no trust on first use was needed.
    public static func acceptanceByRoomCode(serviceName: String, of session: SecureSession) -> String {
        "'\(serviceName)' proved it knows the room code: pinned its key \(session.peerKey.full) (short \(session.peerKey.short)) without trust on first use; safety code \(session.safetyCode)"
    }

    /// The ssh-style warning for a service whose key is not the pinned one: several lines, to
    /// print as they are (each line passes a terminal-escaping function unchanged: the name
    /// is the user's, the rest ours).
    public static func keyChangedWarning(serviceName: String, pinned: KnownPeers.Pin, presented: PublicKeyFingerprint,
                                         knownPeersPath: String) -> String {
        let banner = "@@@ WARNING: THE KEY OF '\(serviceName)' HAS CHANGED @@@"
        let rule = String(repeating: "@", count: banner.count)
        return """
            \(rule)
            \(banner)
            \(rule)
            IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
            Someone may be answering in place of '\(serviceName)' to read and change what you
            say (a man-in-the-middle attack), or its publisher has a new key (a new computer,
            a lost identity.pem). Nothing was sent.
              pinned key:    \(pinned.key.full)
                             in '\(knownPeersPath)' line \(pinned.lineNumber)
              presented key: \(presented.full)
            Ask the publisher which key svc-publish shows. If it is the presented one, forget
            the old pin and connect again:
              \(forgetCommand(serviceName))
            """
    }
}
