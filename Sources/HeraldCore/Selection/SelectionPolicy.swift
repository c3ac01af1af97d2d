/// Choices recipient selection leaves to configuration.
public struct SelectionPolicy: Sendable, Hashable, Codable {
    /// Whether an event without any `UserId` filter that is not `News` goes to everybody (the
    /// letter of seed 000: "if not given, everybody receives") or is refused. Refusing is the
    /// default: a `Message` about money sent to every wallet because a producer forgot the
    /// filter would be far worse than a dead letter.
    public var broadcastNonNewsWithoutUserId: Bool

    public init(broadcastNonNewsWithoutUserId: Bool = false) {
        self.broadcastNonNewsWithoutUserId = broadcastNonNewsWithoutUserId
    }

    public static let `default` = SelectionPolicy()
}
