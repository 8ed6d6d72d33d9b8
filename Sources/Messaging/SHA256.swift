import CCrypto
import Glibc

/// SHA-256 from the system's libcrypto (OpenSSL EVP), fed incrementally.
///
/// - Important: not thread-safe; feed it from one queue.
public final class SHA256: @unchecked Sendable {
    /// Owned; freed in `deinit`.
    private let context: OpaquePointer

    public init() {
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            fatalError("libcrypto could not set up SHA-256")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest (32 bytes). The object cannot be fed afterwards.
    public func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return Array(digest.prefix(Int(length)))
    }

    /// Hashes the first `length` bytes of an open file (from offset 0), reading in large blocks.
    /// - Parameter isCancelled: asked before each block (1 MiB); true stops the work.
    /// - Throws: `FileError` when reading fails, the file is shorter, or the work was cancelled.
    /// - Important: `fd` must stay open until this returns: close it on the same queue.
    public static func digest(of fd: Int32, length: UInt64, into hash: SHA256 = SHA256(),
                              isCancelled: () -> Bool = { false }) throws(FileError) -> SHA256 {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: UInt64 = 0
        while offset < length {
            guard !isCancelled() else { throw FileError("cancelled") }
            let want = Int(min(UInt64(buffer.count), length - offset))
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(offset)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw FileError(count < 0 ? "read: \(String(cString: strerror(errno)))" : "the file ended early") }
            buffer.withUnsafeBytes { hash.update(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            offset += UInt64(count)
        }
        return hash
    }
}

/// Lower-case hex, e.g. for printing a digest.
public func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
}

/// A file could not be read, written or stored. `message` says what and why.
public struct FileError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
