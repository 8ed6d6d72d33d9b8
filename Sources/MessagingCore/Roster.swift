/// The members of a room, in joining order, each under a unique name.
public struct Roster: Sendable {
    private var members: [(id: Int, name: String)] = []

    public init() {}

    /// Why `name` cannot be a member's name, or nil when it can: 1 to 32 bytes of UTF-8 with
    /// no spaces or control characters (so `/msg <name> <text>` stays unambiguous).
    public static func problem(inName name: String) -> String? {
        guard (1...32).contains(name.utf8.count) else { return "names are 1 to 32 bytes, not \(name.utf8.count)" }
        guard !name.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
            return "names may not contain spaces or control characters"
        }
        return nil
    }

    /// Adds a member and returns the name it gets: `requested`, or `requested-2`, `-3`, ...
    /// when that is taken (case-insensitively) or is `reserved` (e.g. the server's own name).
    public mutating func join(id: Int, requested: String, reserved: Set<String> = []) -> String {
        let taken = Set(members.map { $0.name.lowercased() }).union(reserved.map { $0.lowercased() })
        var name = requested
        var number = 2
        while taken.contains(name.lowercased()) {
            let suffix = "-\(number)"
            var base = Substring(requested)
            while base.utf8.count + suffix.utf8.count > 32 { base = base.dropLast() }
            name = base + suffix
            number += 1
        }
        members.append((id, name))
        return name
    }

    /// Removes a member; returns its name if it was one.
    @discardableResult
    public mutating func leave(id: Int) -> String? {
        guard let index = members.firstIndex(where: { $0.id == id }) else { return nil }
        return members.remove(at: index).name
    }

    /// The member called `name` (case-insensitive).
    public func id(named name: String) -> Int? {
        members.first { $0.name.lowercased() == name.lowercased() }?.id
    }

    public func name(of id: Int) -> String? { members.first { $0.id == id }?.name }

    /// Names in joining order.
    public var names: [String] { members.map(\.name) }
    public var count: Int { members.count }
}
