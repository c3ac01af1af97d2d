/// One `EventParams/EventParam`. Templates substitute parameters by position (`{0}` is the first);
/// the name is ignored for substitution (seed 000) but kept because the legacy payloads carry it.
public struct EventParameter: Sendable, Codable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
