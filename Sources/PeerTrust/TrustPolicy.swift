import TransportCore

/// What svc-connect trusts when it joins a room: ssh's known_hosts rules, for rooms.
///
/// The key expected of a service, in this order:
/// 1. a pin in known_peers: only that key (on every reconnect too); a `--fingerprint` that
///    disagrees with it is a usage error;
/// 2. else `--fingerprint`: only a key that matches it, pinned on success;
/// 3. else `--strict`: refused before connecting;
/// 4. else first contact (trust on first use): the key the service announces in its TXT
///    record (`key=`), pinned on success; no announced key is refused.
/// With `--allow-plaintext` the room is joined without TLS and nothing is checked, which is
/// refused for a pinned service and cannot go with `--fingerprint` or `--strict`.
///
/// Pure: the caller reads known_peers and the TXT record, connects, and writes the pin.
public struct TrustPolicy: Sendable {
    /// The instance name as messages show it: svc-connect gives it as svc-browse shows names,
    /// without the quotes (`TerminalSafe.escape(_:mode: .name)`), so a character that draws
    /// nothing is seen, and the `--forget` command it suggests takes that form back.
    public let serviceName: String
    /// The pin from known_peers, if any.
    public let pin: KnownPeers.Pin?
    /// The known_peers file's path, for messages.
    public let knownPeersPath: String
    /// `--fingerprint`: a full or shortened key (`PublicKeyFingerprint.isWellFormedPrefix`).
    public let fingerprint: String?
    /// `--strict`: only pinned keys, or the one given with `--fingerprint`.
    public let strict: Bool
    /// `--allow-plaintext`: join without TLS.
    public let allowPlaintext: Bool
    /// Why known_peers may pin the service without `pin` showing it
    /// (`KnownPeers.uncertainty(about:)`): first contact is then refused.
    public let unreadable: String?
    /// The key this session accepted at its first join when it could not be pinned in the
    /// file: every later attempt of the session expects it, as a pin.
    public let sessionKey: (key: PublicKeyFingerprint, whyNotPinned: String)?

    public init(serviceName: String, pin: KnownPeers.Pin?, knownPeersPath: String, fingerprint: String? = nil,
                strict: Bool = false, allowPlaintext: Bool = false, unreadable: String? = nil) {
        self.init(serviceName: serviceName, pin: pin, knownPeersPath: knownPeersPath, fingerprint: fingerprint, strict: strict,
                  allowPlaintext: allowPlaintext, unreadable: unreadable, sessionKey: nil)
    }

    private init(serviceName: String, pin: KnownPeers.Pin?, knownPeersPath: String, fingerprint: String?, strict: Bool,
                 allowPlaintext: Bool, unreadable: String?, sessionKey: (key: PublicKeyFingerprint, whyNotPinned: String)?) {
        self.serviceName = serviceName
        self.pin = pin
        self.knownPeersPath = knownPeersPath
        self.fingerprint = fingerprint
        self.strict = strict
        self.allowPlaintext = allowPlaintext
        self.unreadable = unreadable
        self.sessionKey = sessionKey
    }

    /// The same policy once `pin` was written: what a reconnect must expect after a first
    /// contact or a `--fingerprint` join pinned the key.
    public func pinned(_ pin: KnownPeers.Pin) -> TrustPolicy {
        TrustPolicy(serviceName: serviceName, pin: pin, knownPeersPath: knownPeersPath, fingerprint: nil, strict: strict,
                    allowPlaintext: allowPlaintext, unreadable: nil, sessionKey: nil)
    }

    /// The same policy when the key accepted at the first join could not be written to
    /// known_peers: the rest of the session expects that key as if it were pinned.
    public func pinnedForSession(_ key: PublicKeyFingerprint, whyNotPinned: String) -> TrustPolicy {
        TrustPolicy(serviceName: serviceName, pin: nil, knownPeersPath: knownPeersPath, fingerprint: nil, strict: strict,
                    allowPlaintext: allowPlaintext, unreadable: nil, sessionKey: (key, whyNotPinned))
    }

    /// What the service announces in its TXT record's `key=` item.
    public enum AnnouncedKey: Sendable, Hashable {
        /// No `key=` item (an older publisher without TLS, or an altered record).
        case absent
        /// A `key=` item that is not a full fingerprint.
        case malformed
        case key(PublicKeyFingerprint)

        /// From the value of the TXT record's `key` item (`TXTRecord.string(forKey: "key")`;
        /// nil when the item is absent).
        public init(txtValue: String?) {
            guard let txtValue else { self = .absent; return }
            if let key = PublicKeyFingerprint(fullForm: txtValue) { self = .key(key) } else { self = .malformed }
        }
    }

    /// Connecting is refused before anything is sent.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        public enum Kind: Sendable, Hashable {
            /// The options contradict each other or the pin: exit 64 (EX_USAGE).
            case usage
            /// The key is not one we trust (or cannot be checked, `--strict`): exit 77 (EX_NOPERM).
            case untrusted
            /// known_peers may pin the service but could not be read: exit 78 (EX_CONFIG).
            case configuration
        }
        public let kind: Kind
        /// What happened and what to do, in one line: for `<tool>: error: …` and the JSON
        /// `error` event.
        public let message: String
        /// Several lines to print as they are on standard error before the error (the
        /// ssh-style key-changed warning), or nil.
        public let warning: String?

        public init(kind: Kind, message: String, warning: String? = nil) {
            self.kind = kind
            self.message = message
            self.warning = warning
        }

        /// The sysexits code: 64 for `.usage`, 77 for `.untrusted`, 78 for `.configuration`.
        public var exitCode: Int32 {
            switch kind {
            case .usage: 64
            case .untrusted: 77
            case .configuration: 78
            }
        }
        public var description: String { message }
    }

    /// How to join.
    public enum Decision: Sendable, Hashable {
        /// Do not connect: print the message and exit with its code.
        case refuse(Refusal)
        /// Join without TLS (`--allow-plaintext`): print the note on standard error first.
        case plaintext(note: String)
        /// Join over TLS and accept only the key the expectation accepts.
        case secure(Expectation)
    }

    /// The refusals that need nothing from the network (the options against each other and
    /// against the pin): check them before looking the service up, so a mistake costs no wait.
    /// `decide(announced:)` makes the same checks again.
    public func refusalBeforeLookup() -> Refusal? {
        if let unreadable, pin == nil, fingerprint == nil {
            return Refusal(kind: .configuration, message: "'\(knownPeersPath)' may pin '\(serviceName)', but \(unreadable); fix or remove that line (or give --fingerprint with its key) before joining it; nothing was sent")
        }
        if allowPlaintext {
            if let pin {
                return Refusal(kind: .usage, message: Self.plaintextRefusedForPin(serviceName, pin, knownPeersPath))
            }
            if fingerprint != nil || strict {
                return Refusal(kind: .usage, message: "--allow-plaintext cannot go with \(fingerprint != nil ? "--fingerprint" : "--strict"): without TLS no key is checked; leave out one of them")
            }
            return nil
        }
        if let pin, let fingerprint, !pin.key.matches(fingerprint) {
            return Refusal(kind: .usage, message: "--fingerprint \(fingerprint) does not match the key pinned for '\(serviceName)', \(pin.key.full) ('\(knownPeersPath)' line \(pin.lineNumber)); to trust another key, first run: \(Self.forgetCommand(serviceName))")
        }
        if pin == nil, fingerprint == nil, strict {
            return Refusal(kind: .untrusted, message: "'\(serviceName)' is not in known_peers; give --fingerprint with its key (svc-publish shows it), or leave out --strict to trust the key it announces on first contact; nothing was sent")
        }
        return nil
    }

    /// The decision for one connection attempt, once the service's TXT record is known.
    /// - Parameter announced: the TXT record's `key=` item (used only on first contact).
    public func decide(announced: AnnouncedKey) -> Decision {
        if let refusal = refusalBeforeLookup() { return .refuse(refusal) }
        if allowPlaintext { return .plaintext(note: Self.plaintextNote(serviceName)) }
        let context = Expectation.Context(serviceName: serviceName, knownPeersPath: knownPeersPath)
        if let pin { return .secure(Expectation(rule: .pinned(pin), context: context)) }
        if let sessionKey { return .secure(Expectation(rule: .session(sessionKey.key, whyNotPinned: sessionKey.whyNotPinned), context: context)) }
        if let fingerprint { return .secure(Expectation(rule: .fingerprint(fingerprint), context: context)) }
        switch announced {
        case .key(let key): return .secure(Expectation(rule: .announced(key), context: context))
        case .absent:
            return .refuse(Refusal(kind: .untrusted, message: "'\(serviceName)' announces no key (its TXT record has no key= item): it may run an older svc-publish without TLS, or someone altered its announcement; nothing was sent. Give its key with --fingerprint (svc-publish shows it), or --allow-plaintext for an older publisher you trust"))
        case .malformed:
            return .refuse(Refusal(kind: .untrusted, message: "'\(serviceName)' announces a key= item that is not a key (SHA256: and 43 characters of base64): someone may have altered its announcement; nothing was sent. Give its key with --fingerprint (svc-publish shows it)"))
        }
    }

    /// `svc-connect --forget 'NAME'`, quoted for a POSIX shell.
    public static func forgetCommand(_ serviceName: String) -> String {
        "svc-connect --forget " + shellQuoted(serviceName)
    }

    /// `'text'`, with each `'` written `'\''`.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    static func plaintextRefusedForPin(_ name: String, _ pin: KnownPeers.Pin, _ path: String) -> String {
        "--allow-plaintext: '\(name)' is pinned to \(pin.key.full) ('\(path)' line \(pin.lineNumber)), so it is joined only over TLS with that key; leave out --allow-plaintext, or if it really lost its key, run \(forgetCommand(name)) first"
    }

    static func plaintextNote(_ name: String) -> String {
        "joining '\(name)' without TLS (--allow-plaintext): its key is not checked and anyone on the network can read and change what is said"
    }
}
