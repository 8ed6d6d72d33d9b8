import CommandLineSupport
import DNSSD
import DiscoveryCore
import TransportCore

/// How svc-browse prints one event, as a text line or a JSON object.
enum BrowseOutput {
    static func format(_ event: String, _ instance: ServiceInstance, _ interfaces: [NetworkInterface]?,
                       _ resolution: (ResolvedService, [SocketEndpoint])?, answering: Result<Void, any Error>? = nil,
                       time: String, json: Bool) -> String {
        json ? jsonLine(event, instance, interfaces, resolution, answering, time: time)
            : textLine(event, instance, interfaces, resolution, answering)
    }

    /// `added "name" _p2pipp._tcp local. on veth0 at host.local.:port [addresses] txt: "k=v" [answering]`
    static func textLine(_ event: String, _ instance: ServiceInstance, _ interfaces: [NetworkInterface]?,
                         _ resolution: (ResolvedService, [SocketEndpoint])?, _ answering: Result<Void, any Error>?) -> String {
        var line = "\(event) \(TerminalSafe.quoted(instance.name)) \(instance.type.baseType) \(instance.domain)"
        if let interfaces { line += " on " + interfaces.map(\.name).joined(separator: ",") }
        if let (resolved, endpoints) = resolution {
            line += " at \(resolved.hostTarget):\(resolved.port)"
            line += " [" + endpoints.map(\.addressWithScope).joined(separator: ", ") + "]"
            let items = txtItems(resolved.txtBytes)
            if !items.isEmpty { line += " txt: " + items.map { TerminalSafe.quoted(String(decoding: $0, as: UTF8.self)) }.joined(separator: " ") }
        }
        switch answering {
        case .success?: line += " [answering]"
        case .failure(let error)?: line += " [not answering: \(error)]"
        case nil: break
        }
        return line
    }

    static func jsonLine(_ event: String, _ instance: ServiceInstance, _ interfaces: [NetworkInterface]?,
                         _ resolution: (ResolvedService, [SocketEndpoint])?, _ answering: Result<Void, any Error>?, time: String) -> String {
        var members: [(String, JSONValue)] = [
            ("event", .string(event)), ("time", .string(time)),
            ("name", .string(instance.name)), ("type", .string(instance.type.baseType)),
            ("domain", .string(instance.domain.name)),
        ]
        if let interfaces { members.append(("interfaces", .array(interfaces.map { .string($0.name) }))) }
        if let (resolved, endpoints) = resolution {
            members += [
                ("host", .string(resolved.hostTarget)), ("port", .integer(Int(resolved.port))),
                ("addresses", .array(endpoints.map { .string($0.addressWithScope) })),
                ("txt", resolved.txt.map(txtObject) ?? .null),
                ("txt_raw", .string(resolved.txtBytes.map(hexByte).joined())),
            ]
        }
        switch answering {
        case .success?: members.append(("answering", .bool(true)))
        case .failure(let error)?: members += [("answering", .bool(false)), ("verify_error", .string("\(error)"))]
        case nil: break
        }
        return JSONValue.object(members).serialized
    }

    /// `type-added _http._tcp local. on veth0`, or its JSON object; nil for `.completeForNow`
    /// (the caller prints the one `complete` line).
    static func typeLine(_ event: ServiceTypeEvent, domain: ServiceDomain, at time: String, json: Bool) -> String? {
        let name: String, type: ServiceType, interfaces: [NetworkInterface]?
        switch event {
        case .added(let added, let on): (name, type, interfaces) = ("type-added", added, on)
        case .removed(let removed): (name, type, interfaces) = ("type-removed", removed, nil)
        case .interfacesChanged(let changed, let on): (name, type, interfaces) = ("type-interfaces", changed, on)
        case .completeForNow: return nil
        }
        guard json else {
            return "\(name) \(type.baseType) \(domain)" + (interfaces.map { " on " + $0.map(\.name).joined(separator: ",") } ?? "")
        }
        var members: [(String, JSONValue)] = [
            ("event", .string(name)), ("time", .string(time)), ("type", .string(type.baseType)), ("domain", .string(domain.name)),
        ]
        if let interfaces { members.append(("interfaces", .array(interfaces.map { .string($0.name) }))) }
        return JSONValue.object(members).serialized
    }

    /// Keys map to their value as text, or `true` for a key without a value.
    static func txtObject(_ txt: TXTRecord) -> JSONValue {
        .object(txt.entries.map { entry in
            (entry.key, entry.value.map { .string(String(decoding: $0, as: UTF8.self)) } ?? .bool(true))
        })
    }

    /// The items of a TXT record as sent, for display (an empty record has none).
    static func txtItems(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var items: [ArraySlice<UInt8>] = []
        var rest = bytes[...]
        while let length = rest.first {
            let item = rest.dropFirst().prefix(Int(length))
            if !item.isEmpty { items.append(item) }
            rest = rest.dropFirst(1 + Int(length))
        }
        return items
    }

    static func hexByte(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}
