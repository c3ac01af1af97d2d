/// The name of an event filter. Extensible: the four names of seed 000 are static members, and
/// any other name a producer sends is kept as it is (and reported by ``Event/unknownFilterNames``)
/// so that nothing is dropped silently.
public struct FilterName: RawRepresentable, Sendable, Codable, Hashable, CustomStringConvertible {
    public let rawValue: String

    /// Known names are normalised to their canonical spelling ("userid" → "UserId").
    public init(rawValue: String) {
        self = FilterName.canonical(rawValue) ?? FilterName(canonical: rawValue)
    }

    /// The one of ``known`` that `name` spells, in its case or another. Compared with each
    /// name in turn, not through a walk over the array (which copies each name out): this runs
    /// for every filter of every event.
    private static func canonical(_ name: String) -> FilterName? {
        if name.asciiCaseInsensitiveEquals(userId.rawValue) { return .userId }
        if name.asciiCaseInsensitiveEquals(cultureId.rawValue) { return .cultureId }
        if name.asciiCaseInsensitiveEquals(zoneId.rawValue) { return .zoneId }
        if name.asciiCaseInsensitiveEquals(branchId.rawValue) { return .branchId }
        return nil
    }

    private init(canonical: String) { self.rawValue = canonical }

    /// The wallet (user) a delivery is for; `0` means everybody (broadcast).
    public static let userId = FilterName(canonical: "UserId")
    /// A culture such as `ru-RU`; a language alone (`ru`) matches every culture of it.
    public static let cultureId = FilterName(canonical: "CultureId")
    /// A zone (seed 000: `w1`, `yessplay`).
    public static let zoneId = FilterName(canonical: "ZoneId")
    /// A branch.
    public static let branchId = FilterName(canonical: "BranchId")

    /// The names of seed 000, the only ones recipient selection understands.
    public static let known: [FilterName] = [.userId, .cultureId, .zoneId, .branchId]

    /// Whether this is one of the names of seed 000.
    public var isKnown: Bool { FilterName.canonical(rawValue) == self }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
