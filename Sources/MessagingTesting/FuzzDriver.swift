import Glibc

/// The entry point of the state-level fuzz targets (Fuzz/targets). Built with
/// `-sanitize=fuzzer`, the binary contains libFuzzer and `main` hands the command line to it;
/// built plainly, it replays each file named on the command line through the same function
/// and exits non-zero if any of them traps (the process dies) — so regressions replay
/// without libFuzzer.
public enum FuzzDriver {
    /// Runs `body` as a libFuzzer target, or replays the files given as arguments.
    /// - Parameter body: one input; it traps (`precondition`) when an invariant breaks.
    public static func main(_ body: @escaping (UnsafeRawBufferPointer) -> Void) -> Never {
        target = body
        typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
        typealias RunDriver = @convention(c) (UnsafeMutablePointer<CInt>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>, Callback) -> CInt
        // RTLD_DEFAULT (nil): libFuzzer is linked in only when built with -sanitize=fuzzer.
        if let symbol = dlsym(nil, "LLVMFuzzerRunDriver") {
            let runDriver = unsafeBitCast(symbol, to: RunDriver.self)
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(runDriver(&argc, &argv) { data, count in
                FuzzDriver.target(UnsafeRawBufferPointer(start: data, count: count))
                return 0
            })
        }
        let paths = CommandLine.arguments.dropFirst()
        guard !paths.isEmpty else {
            complain("usage: \(CommandLine.arguments[0]) FILE...\n  Replays each fuzz input (built with -sanitize=fuzzer: libFuzzer's options).")
            exit(64)
        }
        for path in paths {
            guard let bytes = readFile(path) else {
                complain("cannot read \(path): \(String(cString: strerror(errno)))")
                exit(66)
            }
            bytes.withUnsafeBytes { target($0) }
            print("replayed \(path) (\(bytes.count) bytes)")
        }
        exit(0)
    }

    static func runTarget(_ bytes: UnsafeRawBufferPointer) { target(bytes) }

    nonisolated(unsafe) private static var target: (UnsafeRawBufferPointer) -> Void = { _ in }

    private static func complain(_ line: String) {
        let text = Array((line + "\n").utf8)
        _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    private static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            bytes.append(contentsOf: chunk[..<count])
            if count < chunk.count { return ferror(file) == 0 ? bytes : nil }
        }
    }
}

/// libFuzzer's entry point: one input through the target that `FuzzDriver.main` was given.
/// (libFuzzer's own `main` refers to it, so a -sanitize=fuzzer build needs it to link.)
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzDriver.runTarget(UnsafeRawBufferPointer(start: data, count: count))
    return 0
}

extension FuzzDriver {
    /// Bytes of heap in use now, as AddressSanitizer counts them; nil in a build without it
    /// (a plain replay). For invariants like "a hostile input cannot make us hold more than N".
    public static func allocatedBytes() -> Int? {
        typealias Counter = @convention(c) () -> Int
        guard let symbol = dlsym(nil, "__sanitizer_get_current_allocated_bytes") else { return nil }
        return unsafeBitCast(symbol, to: Counter.self)()
    }
}
