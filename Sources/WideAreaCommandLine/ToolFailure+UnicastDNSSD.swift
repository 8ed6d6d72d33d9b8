import CommandLineSupport
import UnicastDNSSD

extension ToolFailure {
    /// The tool's failure for an error of the unicast DNS-SD module, with the exit code its
    /// kind means for svc-publish, svc-browse and svc-connect alike: 78 for what the user or
    /// the zone's administrator must configure (key file, names, zone, grants), 69 for a
    /// server that cannot be reached, 75 for one that did not answer in time, 73 for a name
    /// someone else holds, 76 for an answer that broke the rules.
    public init(_ error: UnicastDNSSDError) {
        let code: ExitCode = switch error.code {
        case .keyFile, .invalidName, .tooLarge, .noSuchZone, .badKey, .refused: .configuration
        case .unreachable, .connectionRefused: .unavailable
        case .timeout: .temporaryFailure
        case .conflict: .cannotCreate
        default: .protocolError
        }
        self.init(code, error.description)
    }
}
