import Foundation
import XCTest

/// The Python peer treats an ERROR from a room that has not proved the room code as svc-connect
/// does: only that room's refusal (76; 75 for too-many-attempts), never a wrong code (79), and
/// nothing it sent is shown as its own.
extension RoomCodeLANTests {
    func testThePythonPeerTakesAnUnprovedRoomsErrorAsItsRefusalOnly() throws {
        for (claim, status) in [("wrong-room-code", Int32(76)), ("too-many-attempts", Int32(75))] {
            let rogue = try attack(["--timeout", "5", "rogue-room", "0", "--refuse-with", claim])
            defer { stop(rogue) }
            let listening = try XCTUnwrap(rogue.waitForEvent { $0["event"] as? String == "listening" }, rogue.transcript)
            let port = try XCTUnwrap(listening["port"] as? Int, rogue.transcript)
            let py = try peer([try TestLAN.addresses(of: "c").ipv4, String(port), "--room-code", "4829-1530-7719",
                               "--name", "victim", "--timeout", "10"])
            XCTAssertEqual(py.waitForExit(timeout: 30), status, claim + ": " + py.transcript)
            XCTAssertTrue(py.stderr.contains { $0.contains("the room, which has not proved the room code, refused: \(claim): the impostor says") },
                          py.transcript)
            XCTAssertFalse(py.stdout.contains { $0.contains("impostor") }, "nothing from the room is shown as its own: " + py.transcript)
            XCTAssertNil(event("room-code", of: py), py.transcript)
            let received = py.jsonEvents.filter { $0["event"] as? String == "received" }
            XCTAssertEqual(received.map { $0["frame"] as? String }, ["hello", "error"], py.transcript)
            XCTAssertTrue(received.allSatisfy { $0["unproved"] as? Bool == true && $0["name"] == nil && $0["message"] == nil }, py.transcript)
        }
    }
}
