/// A declaration the broker refused because the object already exists with other settings
/// (406 PRECONDITION_FAILED). Herald then uses the existing object as it is and hands this value
/// back for the caller to log: changing a queue's arguments means deleting and re-creating it, an
/// operator's decision, not something a worker should do on start-up.
public struct AMQPTopologyWarning: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case queue
        case exchange
    }

    public var kind: Kind
    public var name: String
    /// The broker's reply text, e.g. `PRECONDITION_FAILED - inequivalent arg 'x-queue-type' …`.
    public var brokerMessage: String

    public var description: String {
        "\(kind) '\(name)' exists with other arguments and is used as it is: \(brokerMessage)"
    }
}
