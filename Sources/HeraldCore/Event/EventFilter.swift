/// One `EventFilters/Filter` of an event: a name and a value. Names may repeat: filters of one
/// name are OR-ed, different names AND-ed (see ``RecipientSelector``).
public struct EventFilter: Sendable, Codable, Hashable {
    public var name: FilterName
    public var value: String

    public init(name: FilterName, value: String) {
        self.name = name
        self.value = value
    }
}
