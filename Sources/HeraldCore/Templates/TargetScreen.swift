/// Where the app goes when the user taps the notification (seed 000 table 2, last column).
/// Extensible: the app may add screens without a Herald release.
public struct TargetScreen: RawRepresentable, Sendable, Codable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// "Таймлайн": the feed of operations; also where grouped notifications lead (requirement 7).
    public static let timeline = TargetScreen(rawValue: "timeline")
    /// "Дашборд": the wallet's main screen.
    public static let dashboard = TargetScreen(rawValue: "dashboard")
    /// "Экран оплаты выставленного счета": pay the invoice that was issued.
    public static let invoicePayment = TargetScreen(rawValue: "invoicePayment")

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
