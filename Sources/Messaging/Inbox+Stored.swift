import Glibc

extension Inbox {
    /// What the inbox remembers of a file it stored: its name, and how it looked on disk
    /// then, so that a file changed or replaced since is not taken for the same content.
    struct StoredFile: Sendable {
        let name: String
        let size: UInt64
        /// Its SHA-256, checked when it was stored.
        let digest: [UInt8]
        let device: UInt64
        let inode: UInt64
        let modifiedSeconds: Int
        let modifiedNanoseconds: Int
    }

    /// The files stored by this process remembered at most; the oldest is forgotten first.
    /// (Forgetting only means the same content may be stored once more.)
    static let storedFilesRemembered = 4096

    /// Remembers that `name` holds the content `key` names (its digest, or for a streamed
    /// file its resume tag, and size, from its sender), whose SHA-256 is `digest`. Call after
    /// `store`.
    func remember(_ name: String, key: PartialKey, size: UInt64, digest: [UInt8]) {
        var info = stat()
        guard fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
        let file = StoredFile(name: name, size: size, digest: digest, device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
                              modifiedSeconds: info.st_mtim.tv_sec, modifiedNanoseconds: info.st_mtim.tv_nsec)
        stored.withLock { index in
            if index.files[key.name] == nil {
                index.order.append(key.name)
                if index.order.count > Self.storedFilesRemembered {
                    index.files[index.order.removeFirst()] = nil
                }
            }
            index.files[key.name] = file
        }
    }

    /// The name and SHA-256 of a file this inbox stored with exactly this content (same
    /// SHA-256, or for a streamed file the same resume tag, and size) from the same sender
    /// (`key`, as for resuming) that is still there unchanged (same file, size and
    /// modification time), or nil. Only the sender learns so what it sent before: from anyone
    /// else the content is received as usual, so an offer of a digest tells nothing about
    /// what the inbox holds, nor under which name. (A tag is the sender's word that its file
    /// is unchanged: it can only mislead itself.)
    func existing(_ key: PartialKey, size: UInt64) -> (name: String, digest: [UInt8])? {
        guard let file = stored.withLock({ $0.files[key.name] }), file.size == size else { return nil }
        var info = stat()
        guard fstatat(directoryFD, file.name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG,
              UInt64(clamping: info.st_size) == size, UInt64(info.st_dev) == file.device, UInt64(info.st_ino) == file.inode,
              info.st_mtim.tv_sec == file.modifiedSeconds, info.st_mtim.tv_nsec == file.modifiedNanoseconds else {
            return nil // changed since: the file is received again, and remembered anew
        }
        return (file.name, file.digest)
    }
}

/// The files an inbox stored, by `PartialKey.name` (content and sender), oldest first in
/// `order` (see `Inbox.remember`).
struct StoredFiles: Sendable {
    var files: [String: Inbox.StoredFile] = [:]
    var order: [String] = []
}
