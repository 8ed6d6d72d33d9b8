import CommandLineSupport
import XCTest

final class TransferMeterTests: XCTestCase {
    let start = ContinuousClock.now
    let mib: UInt64 = 1 << 20

    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int64(seconds * 1000)) }

    func testFormatsBytesInBinaryUnitsWithOneDecimal() {
        XCTAssertEqual(TransferFormat.bytes(0), "0 B")
        XCTAssertEqual(TransferFormat.bytes(1023), "1023 B")
        XCTAssertEqual(TransferFormat.bytes(1024), "1.0 KiB")
        XCTAssertEqual(TransferFormat.bytes(1536), "1.5 KiB")
        XCTAssertEqual(TransferFormat.bytes(1024 * 1024 - 1), "1.0 MiB", "1023.999 KiB rounds up into the next unit")
        XCTAssertEqual(TransferFormat.bytes(12_897_485), "12.3 MiB")
        XCTAssertEqual(TransferFormat.bytes(1_181_116_006), "1.1 GiB")
        XCTAssertEqual(TransferFormat.bytes(.max), "16.0 EiB")
        XCTAssertEqual(TransferFormat.rate(12.3 * 1024 * 1024), "12.3 MiB/s")
        XCTAssertEqual(TransferFormat.rate(-5), "0 B/s")
    }

    func testFormatsTimesAsMinutesAndSecondsOrHours() {
        XCTAssertEqual(TransferFormat.duration(.zero), "0:00")
        XCTAssertEqual(TransferFormat.duration(.milliseconds(42_900)), "0:42", "whole seconds, cut")
        XCTAssertEqual(TransferFormat.duration(.seconds(725)), "12:05")
        XCTAssertEqual(TransferFormat.duration(.seconds(3723)), "1:02:03")
        XCTAssertEqual(TransferFormat.duration(.seconds(-3)), "0:00")
    }

    func testASteadyRateGivesRateElapsedAndETA() {
        var meter = TransferMeter(total: 100 * mib, at: start)
        XCTAssertNil(meter.snapshot(at: start).bytesPerSecond, "no rate before a first sample")
        XCTAssertNil(meter.snapshot(at: start).remaining)
        for tick in 1...20 { meter.record(UInt64(tick) * mib, at: at(Double(tick) / 4)) } // 4 MiB/s for 5 s
        let snapshot = meter.snapshot(at: at(5))
        XCTAssertEqual(snapshot.done, 20 * mib)
        XCTAssertEqual(snapshot.percent, 20)
        XCTAssertEqual(snapshot.elapsed, .seconds(5))
        XCTAssertEqual(snapshot.bytesPerSecond ?? 0, 4 * Double(mib), accuracy: 1)
        XCTAssertEqual(snapshot.remaining, .seconds(20), "80 MiB left at 4 MiB/s")
        XCTAssertNil(snapshot.stalledFor)
    }

    func testTheRateFollowsAChangeSmoothly() {
        var meter = TransferMeter(total: 1000 * mib, at: start)
        var done: UInt64 = 0
        for tick in 1...20 { // 10 MiB/s for 10 s
            done += 5 * mib
            meter.record(done, at: at(Double(tick) / 2))
        }
        for tick in 21...22 { // then 2 MiB/s
            done += mib
            meter.record(done, at: at(Double(tick) / 2))
        }
        let rate = meter.snapshot(at: at(11)).bytesPerSecond ?? 0
        XCTAssertLessThan(rate, 10 * Double(mib), "the slowdown shows")
        XCTAssertGreaterThan(rate, 5 * Double(mib), "but one second of it does not swing the estimate")
        for tick in 23...60 {
            done += mib
            meter.record(done, at: at(Double(tick) / 2))
        }
        XCTAssertEqual(meter.snapshot(at: at(30)).bytesPerSecond ?? 0, 2 * Double(mib), accuracy: 0.01 * Double(mib), "a lasting change shows in full")
    }

    func testBurstsWithinOneSampleDoNotSpike() {
        var meter = TransferMeter(total: 100 * mib, at: start)
        meter.record(8 * mib, at: at(0.001)) // a burst of chunks at once, then nothing
        meter.record(8 * mib, at: at(1))
        XCTAssertEqual(meter.snapshot(at: at(1)).bytesPerSecond ?? 0, 8 * Double(mib), accuracy: 1, "the burst counts over its sample, not as an instant")
    }

    func testAResumedTransferCountsOnlyThisAttempt() {
        var meter = TransferMeter(total: 100 * mib, startOffset: 60 * mib, at: start)
        XCTAssertEqual(meter.snapshot(at: start).percent, 60)
        meter.record(70 * mib, at: at(2))
        let snapshot = meter.snapshot(at: at(2))
        XCTAssertEqual(snapshot.startOffset, 60 * mib)
        XCTAssertEqual(snapshot.bytesPerSecond ?? 0, 5 * Double(mib), accuracy: 1, "10 MiB in 2 s, not 70")
        XCTAssertEqual(snapshot.remaining, .seconds(6))
    }

    func testNothingForFiveSecondsIsAStall() {
        var meter = TransferMeter(total: 100 * mib, at: start)
        meter.record(10 * mib, at: at(1))
        XCTAssertNil(meter.snapshot(at: at(5.9)).stalledFor)
        XCTAssertEqual(meter.snapshot(at: at(6)).stalledFor, .seconds(5))
        XCTAssertEqual(meter.snapshot(at: at(8)).stalledFor, .seconds(7))
        XCTAssertLessThan(meter.snapshot(at: at(8)).bytesPerSecond ?? 0, 10 * Double(mib) / 2, "the rate decays while nothing comes")
        meter.record(11 * mib, at: at(9))
        XCTAssertNil(meter.snapshot(at: at(9)).stalledFor, "a byte ends the stall")
    }

    func testACompleteTransferShowsItsAverageAndNoStall() {
        var meter = TransferMeter(total: 30 * mib, at: start)
        meter.record(10 * mib, at: at(1))
        meter.record(30 * mib, at: at(3))
        let snapshot = meter.snapshot(at: at(20))
        XCTAssertTrue(snapshot.isComplete)
        XCTAssertEqual(snapshot.percent, 100)
        XCTAssertEqual(snapshot.remaining, .zero)
        XCTAssertNil(snapshot.stalledFor)
        XCTAssertEqual(snapshot.bytesPerSecond ?? 0, 1.5 * Double(mib), accuracy: 1, "30 MiB over the 20 s shown")
    }

    func testCountsOutOfOrderOrBeyondTheSizeAreClamped() {
        var meter = TransferMeter(total: 10, at: start)
        meter.record(8, at: at(1))
        meter.record(3, at: at(2))
        XCTAssertEqual(meter.done, 8)
        meter.record(.max, at: at(3))
        XCTAssertEqual(meter.done, 10)
        XCTAssertEqual(TransferMeter(total: 0, at: start).snapshot(at: start).percent, 100, "an empty file is complete")
        XCTAssertEqual(TransferMeter(total: 10, startOffset: 99, at: start).done, 10)
    }

    func testAVerySlowTransferHasACappedEstimate() {
        var meter = TransferMeter(total: .max, at: start)
        meter.record(1, at: at(1))
        XCTAssertEqual(meter.snapshot(at: at(1)).remaining, TransferMeter.Snapshot.longestEstimate)
    }
}

final class ProgressLineTests: XCTestCase {
    let start = ContinuousClock.now
    let mib: UInt64 = 1 << 20

    func snapshot(done: UInt64, total: UInt64, after seconds: Int64, stalled: Bool = false) -> TransferMeter.Snapshot {
        var meter = TransferMeter(total: total, at: start)
        if stalled {
            meter.record(done, at: start + .seconds(1))
        } else {
            for second in 1...seconds { meter.record(done * UInt64(second) / UInt64(seconds), at: start + .seconds(second)) }
        }
        return meter.snapshot(at: start + .seconds(seconds))
    }

    func testAWideTerminalShowsEverything() {
        let line = ProgressLine.render(label: "holiday.mp4 to alice", snapshot(done: 42 * mib, total: 84 * mib, after: 42), width: 120)
        XCTAssertEqual(line, "holiday.mp4 to alice  50% [###############...............]  42.0 MiB/84.0 MiB    1.0 MiB/s  0:42  ETA 0:42")
        XCTAssertLessThan(line.count, 120)
    }

    func testTheREADMEsExampleIsWhatIsDrawn() {
        var meter = TransferMeter(total: 200 * mib, at: start)
        for half in 1...14 { meter.record(UInt64(12.3 * Double(half) / 2 * Double(mib)), at: start + .milliseconds(500 * Int64(half))) }
        meter.record(90 * mib, at: start + .milliseconds(7300))
        XCTAssertEqual(ProgressLine.render(label: "holiday.mp4 to Living room", meter.snapshot(at: start + .milliseconds(7300)), width: 100),
                       "holiday.mp4 to Living room  45% [######.........]   90.0 MiB/200.0 MiB   12.3 MiB/s  0:07  ETA 0:09")
    }

    func testTheLineAlwaysFitsTheWidth() {
        let long = String(repeating: "very-long-file-name-", count: 10) + ".iso to Living room"
        for width in [1, 2, 5, 10, 20, 30, 40, 60, 80, 100, 200] {
            for label in ["a", long, String(repeating: "日本", count: 40)] {
                let line = ProgressLine.render(label: label, snapshot(done: 3 * mib, total: 1 << 40, after: 7), others: 2, width: width)
                XCTAssertLessThanOrEqual(ProgressLine.displayWidth(line), max(1, width - 1), "\(width): \(line)")
            }
        }
    }

    func testANarrowTerminalDropsTheBarThenTheLeastImportantFields() {
        let shot = snapshot(done: 42 * mib, total: 84 * mib, after: 42)
        XCTAssertEqual(ProgressLine.render(label: "f", snapshot(done: 5 * mib, total: 84 * mib, after: 42), width: 200),
                       "f   5% [#.............................]   5.0 MiB/84.0 MiB  121.9 KiB/s  0:42  ETA 11:04", "steady widths")
        XCTAssertEqual(ProgressLine.render(label: "holiday.mp4", shot, width: 80),
                       "holiday.mp4  50% [######......]  42.0 MiB/84.0 MiB    1.0 MiB/s  0:42  ETA 0:42")
        XCTAssertEqual(ProgressLine.render(label: "holiday.mp4", shot, width: 60), "holiday.mp4  50%  42.0 MiB/84.0 MiB    1.0 MiB/s  ETA 0:42",
                       "no bar, and the elapsed time goes before the ETA")
        XCTAssertEqual(ProgressLine.render(label: "the holiday film.mp4 to alice", shot, width: 72),
                       "the holiday film.mp4 ...  50%  42.0 MiB/84.0 MiB    1.0 MiB/s  ETA 0:42",
                       "the label keeps 20 columns or more before a field goes")
        XCTAssertEqual(ProgressLine.render(label: "holiday.mp4", shot, width: 40), "holiday.mp4  50%  42.0 MiB/84.0 MiB",
                       "rate, elapsed and ETA go; the label has the room again")
    }

    func testStalledReconnectingAndCompleteTransfersSaySo() {
        let stalled = snapshot(done: 10 * mib, total: 84 * mib, after: 8, stalled: true)
        XCTAssertEqual(ProgressLine.render(label: "f", stalled, width: 200), "f  11% [###...........................]  10.0 MiB/84.0 MiB  stalled 0:07  0:08")
        XCTAssertEqual(ProgressLine.render(label: "f", stalled, condition: .reconnecting, width: 200),
                       "f  11% [###...........................]  10.0 MiB/84.0 MiB  reconnecting  0:08")
        let done = snapshot(done: 84 * mib, total: 84 * mib, after: 42)
        XCTAssertEqual(ProgressLine.render(label: "f", done, others: 1, width: 200),
                       "f 100% [##############################]  84.0 MiB/84.0 MiB    2.0 MiB/s  0:42  (+1 more)")
    }

    func testPeerChosenTextIsEscaped() {
        let line = ProgressLine.render(label: "evil\u{1B}]0;owned\u{07}\r.txt", snapshot(done: 1, total: 2, after: 1), width: 200)
        XCTAssertFalse(line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, line)
        XCTAssertTrue(line.hasPrefix("evil\\u{1B}]0;owned\\u{7}\\u{D}.txt"), line)
    }
}
