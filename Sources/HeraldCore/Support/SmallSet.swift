/// A set for the few elements a single event usually has (its users, zones, branches, the
/// devices it reached): a linear scan over an array while it is small, a hashed `Set` beyond.
/// An event's sets are built and thrown away for every message, and at these sizes hashing each
/// element costs more than comparing it.
struct SmallSet<Element: Hashable> {
    /// Elements in insertion order while there are at most ``linearLimit``.
    private var few: [Element] = []
    private var many: Set<Element>?

    private static var linearLimit: Int { 8 }

    var isEmpty: Bool { few.isEmpty && (many?.isEmpty ?? true) }

    func contains(_ element: Element) -> Bool {
        if let many { return many.contains(element) }
        return few.contains(element)
    }

    /// Room for `count` elements while they are few (one allocation instead of one per growth).
    mutating func reserveCapacity(_ count: Int) {
        if many == nil { few.reserveCapacity(Swift.min(count, Self.linearLimit)) }
    }

    /// Adds `element`; false when it was there already.
    @discardableResult
    mutating func insert(_ element: Element) -> Bool {
        if let inserted = many?.insert(element).inserted { return inserted }
        if few.contains(element) { return false }
        guard few.count < Self.linearLimit else {
            var set = Set(few)
            set.insert(element)
            many = set
            few = []
            return true
        }
        few.append(element)
        return true
    }
}
