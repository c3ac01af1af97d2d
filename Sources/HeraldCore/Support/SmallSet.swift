/// A set for the few elements a single event usually has (its users, cultures, zones,
/// branches, the devices it reached): the first element inline, then a linear scan over an
/// array while they are few, a hashed `Set` beyond. An event's sets are built and thrown away
/// for every message; most hold one element (no allocation then), and at these sizes hashing
/// each element costs more than comparing it.
struct SmallSet<Element: Hashable> {
    private var first: Element?
    /// The elements after ``first``, in insertion order, while there are at most ``linearLimit``.
    private var rest: [Element] = []
    private var many: Set<Element>?

    private static var linearLimit: Int { 8 }

    var isEmpty: Bool { first == nil && many == nil }

    func contains(_ element: Element) -> Bool {
        if let many { return many.contains(element) }
        return first == element || inRest(element)
    }

    /// Compares the elements in place: a walk over the array would copy each one out (a retain
    /// and a release for every string in it).
    private func inRest(_ element: Element) -> Bool {
        rest.withUnsafeBufferPointer { rest in rest.indices.contains { rest[$0] == element } }
    }

    /// Whether an element satisfies `predicate` (a linear scan however many there are).
    func contains(where predicate: (Element) -> Bool) -> Bool {
        if let many { return many.contains(where: predicate) }
        guard let first else { return false }
        if predicate(first) { return true }
        return rest.withUnsafeBufferPointer { rest in rest.indices.contains { predicate(rest[$0]) } }
    }

    /// Room for `count` elements while they are few (one allocation instead of one per growth).
    mutating func reserveCapacity(_ count: Int) {
        if many == nil, count > 1 { rest.reserveCapacity(Swift.min(count, Self.linearLimit) - 1) }
    }

    /// Adds `element`; false when it was there already.
    @discardableResult
    mutating func insert(_ element: Element) -> Bool {
        if let inserted = many?.insert(element).inserted { return inserted }
        guard let first else {
            self.first = element
            return true
        }
        if first == element || inRest(element) { return false }
        guard rest.count + 1 < Self.linearLimit else {
            var set = Set(rest)
            set.insert(first)
            set.insert(element)
            many = set
            self.first = nil
            rest = []
            return true
        }
        rest.append(element)
        return true
    }
}
