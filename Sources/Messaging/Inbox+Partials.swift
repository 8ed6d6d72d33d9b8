import Glibc
import MessagingCore
import TransportCore

extension Inbox {
    /// A transfer the inbox agreed to receive: its partial file, open for reading and writing,
    /// and the bytes it already holds (where the transfer resumes, once their hash is known).
    struct Admission {
        let key: PartialKey
        /// Owned by the caller, who closes it (on its disk queue).
        let fd: Int32
        let have: UInt64
    }

    /// Why an offer was not admitted, with the `FILE_RESULT` status to answer.
    struct Refusal: Error {
        let status: Message.FileStatus
        /// What the sender is told.
        let message: String
        /// What the inbox's owner is told, when it says more than the sender may know (free
        /// space, paths).
        var detail: String?
    }

    /// What of the reserve a transfer beyond its share may use before it is ended (at most
    /// half the reserve): the file system's own blocks, which admission did not count, so that
    /// a sender alone is not ended for them. (Data received and not yet written still counts
    /// as promised: `consumed` runs once it is written.)
    static let reserveSlack: UInt64 = 16 << 20

    /// The number of transfers under way, for all members together.
    var activeTransfers: Int { state.withLock { $0.count } }

    /// Admits an offered file, or says why not: too many transfers (from this member, or in
    /// all), the same file already arriving from the same sender, or too little disk space
    /// once the reserve, what this member's transfers still need and the other senders'
    /// promises (each counted up to its share: `Promises`) are counted. Partial data
    /// that is too old or beyond the limits is removed first. The partial file is opened (and
    /// created, mode 0600) without following links; an empty one is removed again on refusal.
    ///
    /// The admitted transfer counts until `release(_:)`.
    /// - Parameter memberTransfers: how many transfers the offering member has under way.
    func admit(_ key: PartialKey, size: UInt64, memberTransfers: Int) -> Result<Admission, Refusal> {
        state.withLock { active in
            guard memberTransfers < limits.transfersPerMember else {
                return .failure(Refusal(status: .refused,
                    message: "at most \(limits.transfersPerMember) files may arrive from one member at a time; send this one when the others are done"))
            }
            let fromHost = active.remaining.keys.reduce(0) { $0 + ($1.host == key.host ? 1 : 0) }
            guard fromHost < limits.transfersPerHost else {
                return .failure(Refusal(status: .refused,
                    message: "at most \(limits.transfersPerHost) files may arrive from one host at a time; send this one when the others are done"))
            }
            guard active.count < limits.transfers else {
                return .failure(Refusal(status: .refused,
                    message: "the inbox is receiving \(limits.transfers) files already (its limit); send this one later"))
            }
            guard active.remaining[key] == nil else {
                return .failure(Refusal(status: .refused, message: "the same file is already arriving from this address; send it again when that transfer ended"))
            }
            removeStalePartials(active: active.remaining, makingRoomFor: 1)
            let fd = openat(partialFD, key.name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                return .failure(Refusal(status: .writeFailed, message: "cannot create a file in \(directory)/.partial: \(String(cString: strerror(errno)))"))
            }
            var info = stat()
            guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink == 1, info.st_size >= 0 else {
                close(fd)
                return .failure(Refusal(status: .writeFailed,
                    message: "\(directory)/.partial/\(key.name) is not a plain file of this inbox; remove it"))
            }
            // The key holds the size, so more data than offered is damage; it is this sender's own.
            var have = UInt64(info.st_size)
            if have > size {
                guard ftruncate(fd, 0) == 0 else {
                    close(fd)
                    return .failure(Refusal(status: .writeFailed, message: "cannot reset damaged partial data: \(String(cString: strerror(errno)))"))
                }
                have = 0
            }
            let need = size - have
            let reserve = limits.diskReserve
            guard let free = freeBytes() else {
                discard(fd, key, empty: have == 0)
                return .failure(Refusal(status: .writeFailed, message: "cannot tell how much space is free in \(directory): \(String(cString: strerror(errno)))"))
            }
            active.pool = free >= reserve ? free - reserve : 0
            let (fits, promised) = active.fits(need, for: key.member, pool: active.pool)
            guard free >= reserve, fits else {
                discard(fd, key, empty: have == 0)
                return .failure(Refusal(status: .refused, message: "not enough space in the inbox for \(counted(need, "more byte", "more bytes")); try again later",
                    detail: "not enough space in the inbox: \(counted(need, "byte")) needed, \(free) free, of which \(promised) are promised to transfers under way and \(reserve) kept in reserve (other senders' promises count up to their share: a quarter of the usable space for a member, a half for a host)"))
            }
            if let inodes = freeInodes(), inodes < limits.inodeReserve {
                discard(fd, key, empty: have == 0)
                return .failure(Refusal(status: .refused, message: "the inbox has no room for more files; try again later",
                    detail: "the inbox's file system has \(inodes) free inodes, fewer than the \(limits.inodeReserve) kept in reserve; remove files from \(directory)"))
            }
            active.remaining[key] = need
            return .success(Admission(key: key, fd: fd, have: have))
        }
    }

    private func discard(_ fd: Int32, _ key: PartialKey, empty: Bool) {
        close(fd)
        if empty { unlinkat(partialFD, key.name, 0) }
    }

    /// `bytes` more of an admitted transfer were written: it needs that much less space (bytes
    /// received but not yet written still count as promised, since free space falls only as
    /// they are written: many senders' disk backlogs cannot be admitted past the free space). Returns
    /// false when the transfer must end for lack of space: its sender holds more than its
    /// share (`Promises`), so not all it needs was set aside, and what it still needs no
    /// longer fits beside the other senders' shares and the reserve, less `reserveSlack`.
    func consumed(_ bytes: UInt64, by key: PartialKey) -> Bool {
        state.withLock { active in
            guard let remaining = active.remaining[key] else { return true }
            active.remaining[key] = remaining - min(remaining, bytes)
            guard active.isBeyondShare(key), let free = freeBytes() else { return true }
            let reserve = limits.diskReserve
            active.pool = free >= reserve ? free - reserve : 0
            let kept = reserve - min(reserve / 2, Self.reserveSlack)
            let usable = free >= kept ? free - kept : 0
            return active.fits(0, for: key.member, pool: usable).fits
        }
    }

    /// An admitted transfer ended and its partial file is closed: it no longer counts.
    func release(_ key: PartialKey) {
        _ = state.withLock { $0.remaining.removeValue(forKey: key) }
    }

    /// Removes an empty partial file (a transfer that ended before any data arrived).
    /// Call on the queue that closes `fd`, before closing it.
    func removeIfEmpty(_ key: PartialKey, fd: Int32) {
        var info = stat()
        if fstat(fd, &info) == 0 && info.st_size == 0 { unlinkat(partialFD, key.name, 0) }
    }

    /// Removes a partial file whose data is worthless (it did not match its digest).
    func remove(_ key: PartialKey) { unlinkat(partialFD, key.name, 0) }

    /// Removes partial data not in use that is older than `limits.partialMaximumAge`, then the
    /// oldest files until at most `partialMaximumCount - room` files and `partialMaximumBytes`
    /// remain (files in use count, but are never removed). Symbolic links are removed, never
    /// followed; anything else that is not a plain file is left alone.
    func removeStalePartials(makingRoomFor room: Int) {
        state.withLock { removeStalePartials(active: $0.remaining, makingRoomFor: room) }
    }

    private func removeStalePartials(active: [PartialKey: UInt64], makingRoomFor room: Int) {
        let inUse = Set(active.keys.map(\.name))
        let now = Int64(time(nil))
        let maximumAge = limits.partialMaximumAge.components.seconds
        var keptCount = 0
        var keptBytes: UInt64 = 0
        var candidates: [(name: String, modified: Int64, size: UInt64)] = []
        for name in partialNames() {
            var info = stat()
            guard fstatat(partialFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            let type = info.st_mode & S_IFMT
            if type == S_IFLNK { unlinkat(partialFD, name, 0); continue }
            guard type == S_IFREG else { continue }
            let size = UInt64(max(0, info.st_size))
            if inUse.contains(name) {
                keptCount += 1
                keptBytes = keptBytes.addingReportingOverflow(size).overflow ? .max : keptBytes + size
                continue
            }
            let modified = Int64(info.st_mtim.tv_sec)
            let age = now.subtractingReportingOverflow(modified)
            if age.overflow || age.partialValue > maximumAge { unlinkat(partialFD, name, 0); continue }
            candidates.append((name, modified, size))
        }
        // Over the limits, the sender with the most partial data loses its oldest first: one
        // who floods `.partial` pushes out its own files before anyone else's.
        var bySender: [Substring: [(name: String, modified: Int64, size: UInt64)]] = [:]
        for candidate in candidates.sorted(by: { $0.modified < $1.modified }) { // oldest first
            bySender[candidate.name.split(separator: "-").last ?? "", default: []].append(candidate)
            keptCount += 1
            keptBytes = keptBytes.addingReportingOverflow(candidate.size).overflow ? .max : keptBytes + candidate.size
        }
        while keptCount + room > limits.partialMaximumCount || keptBytes > limits.partialMaximumBytes,
              let sender = bySender.max(by: { a, b in // most files; among equals, the oldest file
                  a.value.count != b.value.count ? a.value.count < b.value.count : (a.value.first?.modified ?? 0) > (b.value.first?.modified ?? 0)
              })?.key,
              let oldest = bySender[sender]?.first {
            unlinkat(partialFD, oldest.name, 0)
            bySender[sender]?.removeFirst()
            if bySender[sender]?.isEmpty == true { bySender[sender] = nil }
            keptCount -= 1
            keptBytes -= min(keptBytes, oldest.size)
        }
    }

    /// The names in `.partial`, read through a fresh descriptor of it.
    private func partialNames() -> [String] {
        let fd = openat(partialFD, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        guard let stream = fdopendir(fd) else {
            close(fd)
            return []
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
