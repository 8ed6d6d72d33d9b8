import CommandLineSupport
import DiscoveryCore
import PeerTrust

extension SvcConnect {
    /// `svc-connect --forget NAME`: removes the name's pin from known_peers and says which line
    /// it was, or that there was none. Touches no network.
    static func forgetPin(_ options: ConnectOptions) throws -> ExitCode {
        let instance = ServiceInstance(name: options.name, type: options.type, domain: options.domain)
        do throws(PeerTrustError) {
            let file = try KnownPeersFile.standard()
            var peers = try file.load()
            for note in peers.warningNotes(path: file.path) { Console.note(note) }
            let removed = peers.forget(instance)
            guard !removed.isEmpty else {
                Console.note("no pin for '\(options.name)' (\(ServiceName(instance).presentation)) in '\(file.path)'; nothing changed")
                return .success
            }
            try file.save(peers)
            for pin in removed {
                Console.out("forgot the key of '\(options.name)', \(pin.key.full), line \(pin.lineNumber) of '\(file.path)'")
            }
            return .success
        } catch {
            throw ToolFailure(.configuration, "known_peers cannot be used: \(error.message)")
        }
    }
}
