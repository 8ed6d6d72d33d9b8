import CommandLineSupport
import HostDiagnosis

/// svc-doctor's `--json` output: one `check` object per finding, then a `summary`.
enum DiagnosisJSON {
    static func lines(_ diagnosis: Diagnosis) -> [String] {
        let checks = diagnosis.findings.map { finding in
            object("check", [
                ("check", .string(finding.check)),
                ("title", .string(finding.title)),
                ("status", .string(finding.status.rawValue)),
                ("summary", .string(finding.summary)),
                ("observed", .array(finding.observed.map(JSONValue.string))),
                ("fixes", .array(finding.fixes.map(JSONValue.string))),
            ])
        }
        return checks + [object("summary", [
            ("status", .string(diagnosis.status.rawValue)),
            ("problems", .integer(diagnosis.count(.problem))),
            ("warnings", .integer(diagnosis.count(.warning))),
            ("exit_code", .integer(Int(SvcDoctor.exitCode(for: diagnosis).rawValue))),
        ])]
    }

    private static func object(_ event: String, _ fields: [(String, JSONValue)]) -> String {
        JSONValue.object([("event", .string(event)), ("time", .string(timestampNow()))] + fields).serialized
    }
}
