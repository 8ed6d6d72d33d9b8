import Glibc

extension TSIGKey {
    /// Reads a `tsig-keygen` key file, refusing one that others could read, as ssh refuses a
    /// private key with loose permissions.
    ///
    /// The file must be a regular file (a symbolic link is not followed), owned by this user
    /// or root, with no permission for group or others (`chmod 600`), and at most
    /// `maximumFileSize` bytes.
    /// - Throws: `.keyFile` saying what is wrong and how to fix it; never the secret.
    public static func load(path: String) throws(UnicastDNSSDError) -> TSIGKey {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            throw UnicastDNSSDError(.keyFile, "cannot open the TSIG key file \(path): \(String(cString: strerror(code))) (errno \(code)); give the file 'tsig-keygen' wrote, readable by you only")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            throw UnicastDNSSDError(.keyFile, "cannot read the TSIG key file \(path): \(String(cString: strerror(code))) (errno \(code))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw UnicastDNSSDError(.keyFile, "the TSIG key file \(path) is not a regular file; give the file 'tsig-keygen' wrote")
        }
        guard info.st_uid == getuid() || info.st_uid == 0 else {
            throw UnicastDNSSDError(.keyFile, "the TSIG key file \(path) belongs to another user (uid \(info.st_uid)); keys must be your own: copy it and 'chmod 600' the copy")
        }
        guard info.st_mode & 0o077 == 0 else {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw UnicastDNSSDError(.keyFile, "the TSIG key file \(path) can be read or written by others (mode \(mode)); anyone who reads it can change the zone: run 'chmod 600 \(path)'")
        }
        guard info.st_size <= maximumFileSize else {
            throw UnicastDNSSDError(.keyFile, "the TSIG key file \(path) is \(info.st_size) bytes, more than \(maximumFileSize); give the file 'tsig-keygen' wrote")
        }
        var bytes = [UInt8](repeating: 0, count: maximumFileSize + 1)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                let code = errno
                throw UnicastDNSSDError(.keyFile, "cannot read the TSIG key file \(path): \(String(cString: strerror(code))) (errno \(code))")
            }
            if count == 0 { break }
            filled += count
        }
        guard filled <= maximumFileSize else {
            throw UnicastDNSSDError(.keyFile, "the TSIG key file \(path) is longer than \(maximumFileSize) bytes; give the file 'tsig-keygen' wrote")
        }
        guard let text = String(validating: bytes[..<filled], as: UTF8.self) else {
            throw UnicastDNSSDError(.keyFile, "the TSIG key file \(path) is not text; give the file 'tsig-keygen' wrote")
        }
        return try TSIGKey(parsing: text, source: path)
    }
}
