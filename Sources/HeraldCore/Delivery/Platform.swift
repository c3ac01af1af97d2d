/// The push platform of a device: APNs for `ios`, FCM for `android` (seed 000's `"os"` field).
public enum Platform: String, Sendable, Codable, Hashable, CaseIterable, CustomStringConvertible {
    case ios
    case android

    /// Parses `ios`/`android` ASCII case-insensitively (the legacy API sends lowercase).
    public init?(name: some StringProtocol) {
        guard let match = Platform.allCases.first(where: { $0.rawValue.asciiCaseInsensitiveEquals(name) }) else { return nil }
        self = match
    }

    public var description: String { rawValue }

    /// The provider that serves it, as metrics and logs name it: `apns` or `fcm`.
    public var provider: String {
        switch self {
        case .ios: "apns"
        case .android: "fcm"
        }
    }
}
