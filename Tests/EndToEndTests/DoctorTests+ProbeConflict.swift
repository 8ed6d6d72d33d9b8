import Foundation
import XCTest

/// A host that answers for every name of svc-doctor's probe: host a of the doctor's LAN runs a
/// small responder that, to each mDNS query naming `svc-doctor probe …`, replies with an SRV
/// record of its own for that name. Avahi on host b then renames the probe again and again; the
/// doctor must blame the network, not tell the user to restart a daemon that works.
extension DoctorTests {
    static let probeNameThief = """
        import socket, struct, sys, time
        me = sys.argv[1]
        rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        rx.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        rx.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        rx.bind(("224.0.0.251", 5353))
        rx.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton("224.0.0.251") + socket.inet_aton(me))
        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        tx.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        tx.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        tx.bind((me, 5353))  # responses from another port are not taken for mDNS
        tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
        tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(me))
        def read_name(pkt, off, hops=0):
            labels = []
            while hops < 20:
                n = pkt[off]
                if n & 0xC0 == 0xC0:
                    return labels + read_name(pkt, ((n & 0x3F) << 8) | pkt[off + 1], hops + 1)[0], off + 2
                if n == 0:
                    return labels, off + 1
                labels.append(pkt[off + 1:off + 1 + n]); off += 1 + n
            raise ValueError("loop")
        def encode(labels):
            return b"".join(bytes([len(l)]) + l for l in labels) + b"\\0"
        print("listening", flush=True)
        end = time.time() + 60
        while time.time() < end:
            rx.settimeout(1)
            try:
                pkt, src = rx.recvfrom(9000)
            except socket.timeout:
                continue
            if src[0] == me or len(pkt) < 12:
                continue
            try:
                off = 12
                for _ in range(struct.unpack("!H", pkt[4:6])[0]):
                    labels, off = read_name(pkt, off); off += 4
                    if len(labels) == 4 and labels[0].startswith(b"svc-doctor probe") and labels[1] == b"_svc-doctor":
                        rdata = struct.pack("!HHH", 0, 0, 9) + encode([b"thief", b"local"])
                        record = encode(labels) + struct.pack("!HHIH", 33, 0x8001, 120, len(rdata)) + rdata
                        tx.sendto(struct.pack("!HHHHHH", 0, 0x8400, 0, 1, 0, 0) + record, ("224.0.0.251", 5353))
                        print("answered", labels[0].decode(errors="replace"), flush=True)
            except (IndexError, ValueError, struct.error):
                continue
        """

    func testAProbeNameAnotherHostAnswersForIsBlamedOnTheNetwork() throws {
        let address = try TestLAN.addresses(of: "a", lan: lan).ipv4
        let thief = try TestLAN.command(on: "a", lan: lan, ["python3", "-c", Self.probeNameThief, address])
        defer {
            thief.signal(SIGTERM)
            _ = thief.waitForExit()
        }
        XCTAssertNotNil(thief.waitForLine { $0 == "listening" }, thief.transcript)
        let report = try diagnose("b")
        XCTAssertEqual(report.status, 1, report.transcript)
        XCTAssertEqual(report.status(of: "avahi-daemon"), "ok", report.transcript)
        XCTAssertEqual(report.status(of: "self-test"), "problem", report.transcript)
        // Named outright when the doctor's browse saw the renamed probe; otherwise (the browse
        // may see none of Avahi's silent renames in time) among the fixes of a failed publish.
        let named = report.summary(of: "self-test").hasPrefix("another host on the network answers for the probe's name (renamed ")
        let suggested = report.summary(of: "self-test").contains("failed at publish")
            && report.fixes(of: "self-test").contains { $0.contains("another host on the network may be answering for the probe's name") }
        XCTAssertTrue(named || suggested, "\(report.summary(of: "self-test")) \(thief.transcript) \(report.transcript)")
        XCTAssertFalse(report.fixes(of: "self-test").joined().contains("restart"), report.transcript)
        XCTAssertNotNil(thief.waitForLine { $0.hasPrefix("answered svc-doctor probe ") }, thief.transcript)
    }
}
