@testable import Messaging
import MessagingCore
import MessagingTesting
import XCTest

extension FileRelayTests {
    /// A member sending tiny files to the room's inbox by the hundred (attacks20 limits: 51,299
    /// files and 102,609 lines in 30 s): the room prints 20 lines about them in 10 s, then a count.
    func testAFloodOfTinyFilesToTheInboxPrintsAtMostTheBurstThenASummary() throws {
        let mallory = rawMember("mallory")
        scheduler.run()
        for index in 0..<100 as Range<UInt32> {
            let content = [UInt8(index)]
            let digest = SHA256()
            digest.update(content)
            mallory.send(.fileOffer(.init(id: index + 1, size: 1, digest: digest.finish(), name: "tiny\(index)")))
            scheduler.run()
            mallory.send(.fileChunk(id: index + 1, data: content[...]))
            mallory.send(.fileEnd(id: index + 1, digest: nil))
            scheduler.run()
        }
        let stored = mallory.messages.count { if case .fileResult(_, .stored, _) = $0 { true } else { false } }
        XCTAssertEqual(stored, 100, "every file was stored: \(mallory.messages.suffix(3))")
        scheduler.advance(by: .seconds(11))
        let lines = serverEvents.count {
            switch $0 {
            case .file(_, .receiving), .file(_, .stored): true
            default: false
            }
        }
        XCTAssertEqual(lines, 20, "the burst, receiving and stored lines together")
        let summaries = serverEvents.compactMap { if case .note(let text) = $0, text.hasPrefix("not shown one by one") { text } else { nil } }
        XCTAssertEqual(summaries, ["not shown one by one in the last 10 s: files received from members (receiving and stored), 180 more"])
    }
}
