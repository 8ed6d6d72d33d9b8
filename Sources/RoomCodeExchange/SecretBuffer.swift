import CSodium

/// Bytes that must not outlive their use: a fixed-size buffer of its own (never copied by
/// Swift), wiped with `sodium_memzero` by `wipe()` and when it is freed.
///
/// - Important: Not `Sendable`: it belongs to the one exchange (or caller) that holds it.
final class SecretBuffer {
    /// The number of bytes; fixed.
    let count: Int
    private let storage: UnsafeMutableRawBufferPointer

    /// A buffer of `count` zero bytes.
    init(count: Int) {
        self.count = max(0, count)
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, self.count), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
    }

    /// A buffer holding `bytes`; wipes `bytes` (the caller's array storage) after copying.
    convenience init(taking bytes: inout [UInt8]) {
        self.init(count: bytes.count)
        bytes.withUnsafeBytes { source in
            guard let from = source.baseAddress, let to = storage.baseAddress else { return }
            to.copyMemory(from: from, byteCount: source.count)
        }
        Sodium.wipe(&bytes)
    }

    deinit {
        sodium_memzero(storage.baseAddress, storage.count)
        storage.deallocate()
    }

    /// Calls `body` with the bytes; the pointer must not escape it.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0 ..< count]))
    }

    /// Calls `body` with the bytes to change them; the pointer must not escape it.
    func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeMutableRawBufferPointer(rebasing: storage[0 ..< count]))
    }

    /// Overwrites the bytes with zeros.
    func wipe() {
        sodium_memzero(storage.baseAddress, storage.count)
    }
}
