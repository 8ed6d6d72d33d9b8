import CommandLineSupport
import Messaging
import PeerTrust
import Synchronization
import TransportCore

/// The room's members file (`MembersFile`, beside the identity key) as the room's
/// `MemberDirectory`: read once at start, rewritten atomically each time a key passes the
/// room code.
final class MembersDirectory: MemberDirectory {
    private let file: MembersFile
    private let list: Mutex<MemberList>

    /// Reads the file beside the identity at `identityPath`; says which lines were skipped.
    /// - Throws: `ToolFailure` (78) when it exists but cannot be read.
    init(besideIdentity identityPath: String) throws {
        file = MembersFile(besideIdentity: identityPath)
        do throws(PeerTrustError) {
            let loaded = try file.load()
            for note in loaded.warningNotes(path: file.path) { Console.note(note) }
            for clash in loaded.clashingNames {
                Console.note("'\(file.path)' lists the name \(clash.name) (or one that looks the same) for \(clash.keys.count) keys (\(clash.keys.joined(separator: ", "))): only the first line's key gets it; give the others names of their own")
            }
            list = Mutex(loaded)
        } catch {
            throw ToolFailure(.configuration, "the members file cannot be used: \(error.message)")
        }
    }

    var path: String { file.path }
    var count: Int { list.withLock { $0.count } }

    func listing(for key: PublicKeyFingerprint) -> MemberListing? {
        list.withLock { $0.entry(for: key) }.map { MemberListing(name: $0.name) }
    }

    func holder(ofName name: String) -> PublicKeyFingerprint? {
        list.withLock { $0.holder(ofName: name) }
    }

    func add(_ key: PublicKeyFingerprint, name: String) -> String? {
        list.withLock { list in
            var updated = list
            guard updated.add(key, name: name) else {
                return "'\(file.path)' already lists \(MemberList.maximumLines) lines, the most it may have"
            }
            do throws(PeerTrustError) {
                try file.save(updated)
                list = updated
                return nil
            } catch {
                return error.message
            }
        }
    }
}
