import CommandLineSupport
import Dispatch
import SecureTransport
import TransportCore
import TransportPOSIX

/// svc-bench's `--tls`: its connections go through TLS 1.3 as a client (`sink`: as a server), with one key for this
/// process (every member of `room` presents it): made in memory, or `--identity`'s file, so
/// that members of another run come back with the key their names are bound to.
///
/// A load generator, not a member anyone trusts: it accepts the server key given with
/// `--fingerprint`, or any key when none is given (it pins nothing and reads no known_peers).
struct ClientSecurity: Sendable {
    let identity: Identity
    /// `--fingerprint`: the full form or a prefix of at least 12 characters; nil accepts any key.
    let expectedServerKey: String?

    /// Makes the ephemeral key, or loads (or creates) the one at `identityPath`.
    /// - Throws: `ToolFailure`: 78 when the key file cannot be used, 70 when OpenSSL cannot
    ///   make a key.
    init(expectedServerKey: String?, identityPath: String?) throws {
        do throws(SecureTransportError) {
            if let identityPath { identity = try Identity.loadOrCreate(at: identityPath) } else { identity = try Identity.ephemeral() }
        } catch {
            throw ToolFailure(identityPath == nil ? .software : .configuration, "cannot make or load a key for --tls: \(error.message)")
        }
        self.expectedServerKey = expectedServerKey
    }

    /// `connection` (not started yet) wrapped in a TLS client stream that runs on `loop`.
    /// - Throws: `ToolFailure` (70) when OpenSSL cannot make the connection.
    func wrap(_ connection: Connection, loop: EventLoop) throws -> TLSStream {
        let expected = expectedServerKey
        do throws(SecureTransportError) {
            return try TLSStream(over: connection, scheduler: loop, identity: identity,
                                 role: .client(acceptsServerKey: { key in expected.map { key.matches($0) } ?? true }))
        } catch {
            throw ToolFailure(.software, "cannot start TLS: \(error.message)")
        }
    }

    /// `connection` (accepted, not started yet) wrapped in a TLS server stream that runs on
    /// `loop` (`sink --tls`): it presents this process's key and takes any client key.
    /// - Throws: `ToolFailure` (70) when OpenSSL cannot make the connection.
    func serve(_ connection: Connection, loop: EventLoop) throws -> TLSStream {
        do throws(SecureTransportError) {
            return try TLSStream(over: connection, scheduler: loop, identity: identity, role: .server)
        } catch {
            throw ToolFailure(.software, "cannot start TLS: \(error.message)")
        }
    }
}
