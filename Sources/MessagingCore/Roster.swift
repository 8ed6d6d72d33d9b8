// Roster's rules are MemberName's; users of Roster (RoomServer) compare names with it too.
@_exported import SafeText

/// The members of a room, in joining order, each under a name no other member's could be
/// taken for (`MemberName`: case, compatibility forms, canonical equivalence and look-alike
/// letters are all ignored when names are compared).
public struct Roster: Sendable {
    /// Each member with its name's `MemberName.comparisonKey`, computed once at joining.
    private var members: [(id: Int, name: String, key: String)] = []
    /// Who holds each comparison key, so that a lookup costs the same in a room of 1,000 as in
    /// a room of 2 (a peer may send a private TEXT to a new name in every frame).
    private var idByKey: [String: Int] = [:]

    public init() {}

    /// Why `name` cannot be a member's name, or nil when it can (the rules are
    /// `MemberName.problem(in:)`'s: 1 to 32 bytes, no spaces, controls or invisible
    /// characters, no compatibility forms, no mix of Latin, Greek and Cyrillic letters).
    public static func problem(inName name: String) -> String? { MemberName.problem(in: name) }

    /// Adds a member and returns the name it gets: `requested`, or `requested-2`, `-3`, ...
    /// when a member's name or a `reserved` one (e.g. the server's own name) is the same as
    /// it by `MemberName.same`, or when `isTaken` says so of the name's
    /// `MemberName.comparisonKey` (a name bound to another member's key).
    public mutating func join(id: Int, requested: String, reserved: Set<String> = [],
                              isTaken: (String) -> Bool = { _ in false }) -> String {
        let name = availableName(requested: requested, reserved: reserved, isTaken: isTaken)
        let key = MemberName.comparisonKey(name)
        members.append((id, name, key))
        idByKey[key] = id
        return name
    }

    /// The name `join` would give now, without joining.
    public func availableName(requested: String, reserved: Set<String> = [], isTaken: (String) -> Bool = { _ in false }) -> String {
        let reservedKeys = Set(reserved.map(MemberName.comparisonKey))
        var name = requested
        var key = MemberName.comparisonKey(name)
        var number = 2
        while idByKey[key] != nil || reservedKeys.contains(key) || isTaken(key) {
            let suffix = "-\(number)"
            var base = Substring(requested)
            while base.utf8.count + suffix.utf8.count > MemberName.maximumBytes { base = base.dropLast() }
            name = base + suffix
            key = MemberName.comparisonKey(name)
            number += 1
        }
        return name
    }

    /// Removes a member; returns its name if it was one.
    @discardableResult
    public mutating func leave(id: Int) -> String? {
        guard let index = members.firstIndex(where: { $0.id == id }) else { return nil }
        let member = members.remove(at: index)
        idByKey[member.key] = nil
        return member.name
    }

    /// The member whose name is the same as `name` by `MemberName.same` (so `/msg ALICE`
    /// finds `alice`). A `name` of more than `MemberName.maximumLookupBytes` bytes (a peer's
    /// TEXT may name anything up to 64 KiB) matches nobody and costs nothing to compare.
    public func id(named name: String) -> Int? {
        guard name.utf8.count <= MemberName.maximumLookupBytes else { return nil }
        return idByKey[MemberName.comparisonKey(name)]
    }

    /// The name of the member `id`, or nil when it is not in the room.
    public func name(of id: Int) -> String? { members.first { $0.id == id }?.name }

    /// Names in joining order.
    public var names: [String] { members.map(\.name) }
    /// Members (id and name) in joining order.
    public var entries: [(id: Int, name: String)] { members.map { ($0.id, $0.name) } }
    /// How many members there are.
    public var count: Int { members.count }
}
