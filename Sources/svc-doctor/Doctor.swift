import CommandLineSupport
import DNSSD
import Glibc
import HostDiagnosis

@main
struct SvcDoctor {
    static func main() async {
        await ToolMain.run(DoctorOptions.spec, validate: DoctorOptions.init, json: { $0.json }) { options in
            let diagnosis = await diagnose(options)
            if options.json {
                DiagnosisJSON.lines(diagnosis).forEach(Console.out)
            } else {
                diagnosis.textLines(verbose: options.verbose).forEach(Console.out)
            }
            return exitCode(for: diagnosis)
        }
    }

    static func exitCode(for diagnosis: Diagnosis) -> ExitCode {
        diagnosis.status == .problem ? DoctorOptions.problemExitCode : .success
    }

    /// Runs the checks in order. Each gathers its facts here (files, /proc, sockets, the
    /// daemon) and hands them to HostDiagnosis, which decides.
    static func diagnose(_ options: DoctorOptions) async -> Diagnosis {
        var findings: [Finding] = []

        let environmentAddress = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }
        let busError: String? = switch SystemBus.probe() {
        case .reachable: nil
        case .unreachable(_, let reason), .outOfFileDescriptors(let reason): reason
        }
        findings.append(.bus(BusFacts(path: SystemBus.socketPath, environmentAddress: environmentAddress, connectError: busError)))

        let daemon = DaemonProbe.facts(busReachable: busError == nil, configOverride: options.avahiConfig)
        findings.append(.daemon(daemon))

        findings.append(.responders(ResponderProbe.facts(daemonPID: daemon.process?.pid)))

        let interfaces = InterfaceProbe.facts().filter { facts in options.interface.map { $0.name == facts.name } ?? true }
        findings.append(.interfaces(interfaces, config: daemon.config ?? AvahiConfig(), configPath: daemon.configPath))

        findings.append(.firewall(FirewallProbe.facts(port: options.port)))

        findings.append(.nss(NSSProbe.facts()))

        findings.append(.selfTest(await SelfTest.run(timeout: options.selfTestTimeout, interface: options.interface)))

        for zone in await ZoneProbe.facts(options) { findings += Finding.zone(zone) }
        return Diagnosis(findings)
    }
}
