/// Who is calling: taken from the bearer token (JWT claims or the introspection answer),
/// never from the request body. The ``zoneId`` and ``branchId`` go into the user's
/// subscriptions (seed 000's `ZoneId`/`BranchId` filters).
public struct Identity: Sendable, Hashable {
    public var userId: String
    public var zoneId: String?
    public var branchId: String?

    /// A user id, zone or branch from a token must be 1…128 characters without control
    /// characters (they become database keys and log metadata).
    static func isAcceptable(_ value: String) -> Bool {
        let scalars = value.unicodeScalars
        return !scalars.isEmpty && scalars.count <= 128 && !scalars.contains { $0.properties.generalCategory == .control }
    }

    /// Builds an identity from token claims, or `nil` when a claim is unacceptable.
    static func from(subject: String?, zone: String?, branch: String?) -> Identity? {
        guard let subject, isAcceptable(subject) else { return nil }
        for value in [zone, branch] {
            if let value, !isAcceptable(value) { return nil }
        }
        return Identity(userId: subject, zoneId: zone, branchId: branch)
    }
}
