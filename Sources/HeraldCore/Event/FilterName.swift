/// The name of an event filter. Extensible: the four names of seed 000 are static members, and
/// any other name a producer sends is kept as it is (and reported by ``Event/unknownFilterNames``)
/// so that nothing is dropped silently.
public struct FilterName: RawRepresentable, Sendable, Codable, Hashable, CustomStringConvertible {
    public let rawValue: String

    /// Known names are normalised to their canonical spelling ("userid" → "UserId").
    public init(rawValue: String) {
        if let known = FilterName.known.first(where: { $0.rawValue == rawValue })
            ?? FilterName.known.first(where: { $0.rawValue.asciiCaseInsensitiveEquals(rawValue) })
        {
            self = known
        } else {
            self.rawValue = rawValue
        }
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
    public var isKnown: Bool { FilterName.known.contains(self) }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
