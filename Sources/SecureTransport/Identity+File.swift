import CSSL
import Glibc

extension Identity {
    /// The most bytes read from a key file (a P-256 key in PEM is about 240).
    static let keyFileLimit = 65_536

    /// The default key file, `$XDG_CONFIG_HOME/svc/identity.pem` (or
    /// `$HOME/.config/svc/identity.pem`), creating the directories that are missing with mode
    /// 0700.
    /// - Throws: `SecureTransportError` (`.keyFileUnusable`) when neither variable gives a
    ///   directory or a directory cannot be made.
    public static func defaultPath() throws(SecureTransportError) -> String {
        let base: String
        if let config = environment("XDG_CONFIG_HOME"), config.hasPrefix("/") {
            base = config
        } else if let home = environment("HOME"), home.hasPrefix("/") {
            base = home + "/.config"
        } else {
            throw SecureTransportError(.keyFileUnusable, "neither XDG_CONFIG_HOME nor HOME names a directory, so svc has no place for its identity key; set HOME or give --identity PATH")
        }
        let directory = base + "/svc"
        for path in [base, directory] where mkdir(path, 0o700) != 0 && errno != EEXIST {
            let code = errno
            throw SecureTransportError(.keyFileUnusable, "cannot create the directory '\(path)' for the identity key: \(String(cString: strerror(code))) (errno \(code)); create it (mode 700) or give --identity PATH", errno: code)
        }
        return directory + "/identity.pem"
    }

    /// Loads the private key at `path`, or, when there is no file, creates a new key there
    /// (mode 0600; the directory must exist).
    ///
    /// Like ssh, a key file that others may read or write (any group or other permission bit)
    /// or that belongs to another user is refused, with the command that fixes it.
    /// - Throws: `SecureTransportError`: `.keyFileTooOpen`, `.keyFileNotOwned`,
    ///   `.keyFileUnusable` (cannot read or create), `.notAKey` (the file holds no P-256
    ///   private key in PEM).
    public static func loadOrCreate(at path: String) throws(SecureTransportError) -> Identity {
        OpenSSL.started
        // Another process may create the file between our open and our create: then read it.
        for _ in 0..<3 {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            if fd >= 0 {
                defer { Glibc.close(fd) }
                return try Identity(key: readKey(fd: fd, path: path), path: path, wasCreated: false)
            }
            let code = errno
            guard code == ENOENT else { throw unusable("read", path, code) }
            if let identity = try create(at: path) { return identity }
        }
        throw SecureTransportError(.keyFileUnusable, "'\(path)' keeps appearing and disappearing; is another program replacing it?")
    }

    /// Makes a key and writes it to a new file; nil when the file appeared meanwhile.
    private static func create(at path: String) throws(SecureTransportError) -> Identity? {
        let key = try generateKey()
        let pem: [UInt8]
        do {
            pem = try privateKeyPEM(key)
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        // Written whole to a file of its own first (O_EXCL with the final mode: never readable
        // by others, not even briefly), then linked into place, which fails when the file
        // appeared meanwhile: another tool starting at the same moment reads a whole key or
        // none, and a file someone else created is never overwritten.
        var suffix = [UInt8](repeating: 0, count: 6)
        _ = RAND_bytes(&suffix, Int32(suffix.count))
        let temporary = path + ".new-" + suffix.map { String($0, radix: 16) }.joined()
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            EVP_PKEY_free(key)
            if code == ENOENT {
                throw SecureTransportError(.keyFileUnusable, "cannot create the identity key '\(path)': its directory does not exist; create it (mode 700) or give another path", errno: code)
            }
            throw unusable("create", path, code)
        }
        defer { unlink(temporary) }
        var written = 0
        while written < pem.count {
            let result = pem[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else {
                let code = errno
                Glibc.close(fd)
                EVP_PKEY_free(key)
                throw unusable("write", path, code)
            }
            written += result
        }
        let synced = fsync(fd) == 0
        var code = errno
        Glibc.close(fd)
        guard synced else {
            EVP_PKEY_free(key)
            throw unusable("write", path, code)
        }
        guard link(temporary, path) == 0 else {
            code = errno
            EVP_PKEY_free(key)
            if code == EEXIST { return nil }
            throw unusable("create", path, code)
        }
        return try Identity(key: key, path: path, wasCreated: true)
    }

    /// Checks the open file's owner and mode, then parses the key (`EVP_PKEY *`, owned by the
    /// caller).
    private static func readKey(fd: Int32, path: String) throws(SecureTransportError) -> OpaquePointer {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw unusable("read", path, errno) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw SecureTransportError(.keyFileUnusable, "'\(path)' is not a regular file; give the path of a key file (or of one to create)")
        }
        guard status.st_uid == geteuid() else {
            throw SecureTransportError(.keyFileNotOwned, "'\(path)' belongs to user \(status.st_uid), not to you (user \(geteuid())): a private key must be yours alone; use your own key file, or remove this one to get a new key")
        }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            let octal = String(mode, radix: 8)
            throw SecureTransportError(.keyFileTooOpen, "permissions \(String(repeating: "0", count: max(0, 4 - octal.count)) + octal) for '\(path)' are too open: a private key must be readable only by you; run: chmod 600 '\(path)'")
        }
        var bytes = [UInt8](repeating: 0, count: keyFileLimit + 1)
        var count = 0
        while count < bytes.count {
            let result = bytes[count...].withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if result < 0 && errno == EINTR { continue }
            guard result >= 0 else { throw unusable("read", path, errno) }
            if result == 0 { break }
            count += result
        }
        let notAKey = SecureTransportError(.notAKey, "'\(path)' does not hold an svc identity key (an ECDSA P-256 private key in PEM); move it away and svc will create a new key there (a new key is a new identity: peers that pinned the old one will warn)")
        guard count <= keyFileLimit else { throw notAKey }
        ERR_clear_error()
        let key: OpaquePointer? = bytes.withUnsafeBytes { buffer in
            // The form svc writes first, by a decoder made for it: 0.9 ms against 1.3 ms for
            // OpenSSL's general reader, on every svc-connect start (docs/BENCHMARKS.md, row 2).
            if let key = cssl_decode_ec_private_key_pem(buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), count) { return key }
            ERR_clear_error()
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        ERR_clear_error()
        guard let key else { throw notAKey }
        guard OpenSSL.isP256(key) else {
            EVP_PKEY_free(key)
            throw notAKey
        }
        return key
    }

    /// The key as unencrypted PKCS#8 PEM ("BEGIN PRIVATE KEY").
    private static func privateKeyPEM(_ key: OpaquePointer) throws(SecureTransportError) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSL.failure("BIO_new") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else { throw OpenSSL.failure("PEM_write_bio_PrivateKey") }
        let length = Int(cssl_bio_pending(bio))
        var pem = [UInt8](repeating: 0, count: length)
        guard BIO_read(bio, &pem, Int32(length)) == Int32(length) else { throw OpenSSL.failure("BIO_read") }
        return pem
    }

    private static func unusable(_ action: String, _ path: String, _ code: Int32) -> SecureTransportError {
        let reason = "\(String(cString: strerror(code))) (errno \(code))"
        let remedy = code == EACCES ? "check the permissions of the file and its directory" : "check the path, or give another with --identity PATH"
        return SecureTransportError(.keyFileUnusable, "cannot \(action) the identity key '\(path)': \(reason); \(remedy)", errno: code)
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
