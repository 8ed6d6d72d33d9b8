import MessagingCore
import XCTest

final class RoomHistoryTests: XCTestCase {
    func line(_ number: Int, text: String? = nil) -> RoomHistory.Line {
        .init(time: UInt64(number), from: "m\(number)", text: text ?? "line \(number)")
    }

    func testKeepsTheNewestLinesOldestFirst() {
        var history = RoomHistory(capacity: 3)
        for number in 1...5 { history.append(line(number)) }
        XCTAssertEqual(history.lines, [line(3), line(4), line(5)])
        XCTAssertEqual(history.byteCount, history.lines.map { $0.from.utf8.count + $0.text.utf8.count }.reduce(0, +))
    }

    func testZeroKeepsNothing() {
        var history = RoomHistory(capacity: 0)
        history.append(line(1))
        XCTAssertEqual(history.lines, [])
        XCTAssertEqual(history.byteCount, 0)
    }

    func testTheCapacityIsCappedWhateverIsAsked() {
        XCTAssertEqual(RoomHistory(capacity: 1_000_000).capacity, RoomHistory.maximumLines)
        XCTAssertEqual(RoomHistory(capacity: -5).capacity, 0)
        var history = RoomHistory(capacity: .max)
        for number in 1...(RoomHistory.maximumLines + 50) { history.append(line(number)) }
        XCTAssertEqual(history.lines.count, RoomHistory.maximumLines)
        XCTAssertEqual(history.lines.first, line(51))
    }

    /// Lines of the largest size: the byte bound holds before the line bound, and the newest
    /// line always stays.
    func testTheByteBoundDropsTheOldestLines() {
        var history = RoomHistory(capacity: RoomHistory.maximumLines)
        let big = String(repeating: "x", count: Message.maximumTextBytes)
        for number in 1...40 { history.append(line(number, text: big)) }
        XCTAssertLessThanOrEqual(history.byteCount, RoomHistory.maximumBytes)
        XCTAssertEqual(history.lines.count, RoomHistory.maximumBytes / (Message.maximumTextBytes + 3))
        XCTAssertEqual(history.lines.last, line(40, text: big))
        history.append(line(41, text: "short"))
        XCTAssertEqual(history.lines.last, line(41, text: "short"))
        XCTAssertLessThanOrEqual(history.byteCount, RoomHistory.maximumBytes)
    }

    func testAHistoryFrameWithTooLongATextIsRefused() {
        let frame = Message.history(time: 1, from: "a", text: String(repeating: "x", count: Message.maximumTextBytes + 1)).frame
        XCTAssertThrowsError(try Message(decoding: frame)) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .malformedFrame)
        }
    }
}
