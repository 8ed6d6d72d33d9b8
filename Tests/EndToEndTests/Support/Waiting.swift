import Foundation
import XCTest

extension XCTestCase {
    /// The first line of `process`'s standard error that matches, once one does, or nil
    /// after `timeout` seconds.
    func waitForStderr(_ process: ToolProcess, timeout: TimeInterval = 10, _ predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let line = process.stderr.first(where: predicate) { return line }
            usleep(20_000)
        }
        return process.stderr.first(where: predicate)
    }

    /// Whether `condition` became true within `seconds`.
    func eventually(within seconds: TimeInterval = 10, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { return false }
            usleep(50_000)
        }
        return true
    }
}
