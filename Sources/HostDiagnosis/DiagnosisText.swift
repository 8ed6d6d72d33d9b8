/// How a diagnosis reads on a terminal: one block per check, then a summary line.
///
/// ```
/// ok       D-Bus system bus: the system bus accepts connections
/// problem  avahi-daemon: avahi-daemon is not running
///          saw: process: no avahi-daemon runs in this network namespace
///          fix: sudo systemctl start avahi-daemon
/// ```
///
/// - Important: the lines hold text from files and processes; print them escaped.
extension Diagnosis {
    /// The lines of the human-readable report; `verbose` also lists what ok checks saw.
    public func textLines(verbose: Bool) -> [String] {
        var lines: [String] = []
        let indent = String(repeating: " ", count: 9)
        for finding in findings {
            let status = finding.status.rawValue
            lines.append(status + String(repeating: " ", count: max(1, 9 - status.count)) + "\(finding.title): \(finding.summary)")
            if verbose || finding.status != .ok {
                lines += finding.observed.map { indent + "saw: " + $0 }
            }
            lines += finding.fixes.map { indent + "fix: " + $0 }
        }
        lines.append(summaryText)
        return lines
    }

    /// `no problems, 1 warning` / `2 problems, 0 warnings`.
    public var summaryText: String {
        func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
        let problems = count(.problem)
        return (problems == 0 ? "no problems" : counted(problems, "problem")) + ", " + counted(count(.warning), "warning")
    }
}
