import CDNSSD
import DNSSD
import DiscoveryCore
import Foundation
import Glibc
import XCTest

/// Resolves went through Avahi's dns_sd layer (`DNSServiceResolve`) and now go through its
/// client library: the TXT bytes must be the record's, in its order (avahi-publish sends its
/// items in the order given: a listener on the virtual LAN saw first=1 second=2 third=3 so),
/// where that layer gave the same items last first.
extension LibraryTests {
    func testResolvedTXTBytesAreTheRecordsInItsOrder() async throws {
        let cases: [[String]] = [[], ["k=v", "flag", "=x", "k2=", "Ü=✓", "a b=c d"], [String(repeating: "a", count: 255)]]
        try useDaemon(of: "b")
        for items in cases {
            let name = TestLAN.uniqueName("txt")
            let publisher = try TestLAN.command(on: "a", ["avahi-publish", "-s", name, "_p2pipp._tcp", "4242"] + items)
            defer {
                // SIGKILL: started from an async test, on one of libdispatch's threads, which
                // block the other signals, it inherits that mask. Its D-Bus connection closes,
                // and the daemon withdraws its service.
                publisher.signal(SIGKILL)
                _ = publisher.waitForExit()
            }
            XCTAssertNotNil(waitForStderr(publisher) { $0.contains("Established under name") }, publisher.transcript)
            let resolved = try await ServiceInstance(name: name, type: .p2pipp, domain: .local).resolve()
            let wire = { (items: [String]) -> [UInt8] in items.isEmpty ? [0] : items.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) } }
            XCTAssertEqual(resolved.txtBytes, wire(items), "\(items)")
            XCTAssertEqual(resolved.port, 4242)
            XCTAssertEqual(try dnssdResolvedTXT(name), wire(items.reversed()), "\(items)")
        }
    }
}

/// The TXT bytes `DNSServiceResolve` (Avahi's dns_sd layer) gives for `name`, or nil when it
/// gave no answer within 5 s. Blocks.
private func dnssdResolvedTXT(_ name: String) throws -> [UInt8]? {
    final class Answer {
        var txt: [UInt8]?
        var code: DNSServiceErrorType = 0
        var done = false
    }
    let answer = Answer()
    var ref: DNSServiceRef?
    let code = DNSServiceResolve(&ref, 0, 0, name, "_p2pipp._tcp", "local.", { _, _, _, code, _, _, _, length, txt, context in
        guard let context else { return }
        let answer = Unmanaged<Answer>.fromOpaque(context).takeUnretainedValue()
        answer.code = code
        answer.txt = txt.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) }
        answer.done = true
    }, Unmanaged.passUnretained(answer).toOpaque())
    guard code == kDNSServiceErr_NoError, let ref else { throw POSIXError(.EIO) }
    defer { DNSServiceRefDeallocate(ref) }
    let deadline = Date().addingTimeInterval(5)
    while !answer.done && Date() < deadline {
        var readable = pollfd(fd: DNSServiceRefSockFD(ref), events: Int16(POLLIN), revents: 0)
        guard poll(&readable, 1, 5000) > 0, DNSServiceProcessResult(ref) == kDNSServiceErr_NoError else { return nil }
    }
    return withExtendedLifetime(answer) { answer.code == kDNSServiceErr_NoError ? answer.txt : nil }
}
