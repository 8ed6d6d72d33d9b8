import CommandLineSupport
import DNSSD
import DiscoveryCore
import Glibc
import TransportCore
import TransportPOSIX

@main
struct SvcConnect {
    static func main() async {
        await ToolMain.run(ConnectOptions.spec, validate: ConnectOptions.init) { options in
            try await connect(options)
        }
    }

    static func connect(_ options: ConnectOptions) async throws -> ExitCode {
        let instance = ServiceInstance(name: options.name, type: options.type, domain: options.domain)
        let deadline = ContinuousClock.now + options.timeout
        func remaining() -> Duration { max(.milliseconds(1), deadline - .now) }

        let resolved: ResolvedService
        do {
            resolved = try await instance.resolve(timeout: options.timeout)
        } catch let error as DNSSDError where error.code == .noSuchName {
            throw ToolFailure(.noHost, error.message + (await namesSeen(options)))
        }
        let endpoints: [SocketEndpoint]
        do {
            endpoints = try await resolved.lookUpAddresses(timeout: remaining())
        } catch let error as DNSSDError where error.code == .noSuchName {
            throw ToolFailure(.noHost, error.message)
        }
        let socket: Socket
        let winner: SocketEndpoint
        do {
            (socket, winner) = try await TCPConnector.connect(to: endpoints, timeout: remaining())
        } catch let error as TransportError {
            throw ToolFailure(.unavailable, "cannot connect to '\(TerminalSafe.escape(options.name))' at \(TerminalSafe.escape(resolved.hostTarget)) port \(resolved.port): \(error)")
        }
        let family = winner.address.family == .ipv6 ? "IPv6" : "IPv4"
        Console.note("connected to \"\(TerminalSafe.escape(options.name))\" at \(winner) (\(family), the first to answer of: \(endpoints.map(\.addressWithScope).joined(separator: ", ")))")
        return await ClientSession(socket: socket, peer: winner, options: options).run()
    }

    /// ", services seen: 'a', 'b'" from a short browse, to help with a misspelt name.
    static func namesSeen(_ options: ConnectOptions) async -> String {
        guard let events = try? ServiceBrowser(type: options.type, domain: options.domain).start() else { return "" }
        var names: [String] = []
        do {
            for try await event in events {
                if case .added(let instance, _) = event { names.append(instance.name) }
                if event == .completeForNow { break }
            }
        } catch {}
        guard !names.isEmpty else { return "; no \(options.type.baseType) services are visible in \(options.domain)" }
        return "; services seen: " + names.sorted().map { "'\(TerminalSafe.escape($0))'" }.joined(separator: ", ")
    }
}

/// "hello from user@host", the client's greeting.
func clientGreeting() -> String {
    var host = [CChar](repeating: 0, count: 256)
    gethostname(&host, host.count - 1)
    let hostName = String(decoding: host.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let user = getenv("USER").map { String(cString: $0) } ?? getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "someone"
    return "hello from \(user)@\(hostName)"
}
