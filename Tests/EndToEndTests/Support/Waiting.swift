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
}
