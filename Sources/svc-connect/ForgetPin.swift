import CommandLineSupport
import DiscoveryCore
import PeerTrust

extension SvcConnect {
    /// `svc-connect --forget NAME`: removes the name's pin from known_peers and says which line
    /// it was, or that there was none. Touches no network.
    static func forgetPin(_ options: ConnectOptions) throws -> ExitCode {
        let given = ServiceInstance(name: options.name, type: options.type, domain: options.domain)
        do throws(PeerTrustError) {
            let file = try KnownPeersFile.standard()
            var peers = try file.load()
            for note in peers.warningNotes(path: file.path) { Console.note(note) }
            // The name as given, else the one it stands for as svc-browse shows names (the form
            // the key-changed warning's --forget command gives).
            var instance = given
            var removed = peers.forget(given)
            if removed.isEmpty, let unescaped = options.unescapedName {
                let other = ServiceInstance(name: unescaped, type: options.type, domain: options.domain)
                removed = peers.forget(other)
                if !removed.isEmpty { instance = other }
            }
            // As the trust messages show a name: escaped as svc-browse does, between single quotes.
            let shown = TerminalSafe.escape(instance.name, mode: .name)
            guard !removed.isEmpty else {
                Console.note("no pin for '\(shown)' (\(ServiceName(instance).presentation)) in '\(file.path)'; nothing changed")
                return .success
            }
            try file.save(peers)
            for pin in removed {
                Console.out("forgot the key of '\(shown)', \(pin.key.full), line \(pin.lineNumber) of '\(file.path)'")
            }
            return .success
        } catch {
            throw ToolFailure(.configuration, "known_peers cannot be used: \(error.message)")
        }
    }
}
