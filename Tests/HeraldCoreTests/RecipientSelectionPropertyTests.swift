import PropertyBased
import Testing

@testable import HeraldCore

/// The selector against a plain restatement of the rules, over random events and subscriptions.
@Suite struct RecipientSelectionPropertyTests {
    /// The rules of the issue, written as directly as possible.
    static func reference(_ event: Event, tag: String?, _ subs: [Subscription]) -> [String]? {
        let users = event.filterValues(.userId)
        if users.isEmpty && event.type != .news { return nil }
        let broadcast = users.isEmpty || users.contains("0")
        func passes(_ name: FilterName, _ matches: (String) -> Bool) -> Bool {
            let values = event.filterValues(name)
            return values.isEmpty || values.contains(where: matches)
        }
        var out: [String] = []
        for s in subs {
            guard s.isEnabled else { continue }
            if let tag, s.mutedTags.contains(tag) || (!s.tags.isEmpty && !s.tags.contains(tag)) { continue }
            guard broadcast || users.contains(s.userId) else { continue }
            guard
                passes(
                    .cultureId,
                    { f in
                        f.lowercased() == s.culture.lowercased()
                            || (!f.contains("-") && s.culture.lowercased().split(separator: "-").first.map(String.init) == f.lowercased())
                    })
            else { continue }
            guard passes(.zoneId, { $0 == s.zoneId }), passes(.branchId, { $0 == s.branchId }) else { continue }
            let line = broadcast ? "\(s.platform)/\(s.deviceId)/0" : "\(s.platform)/\(s.deviceId)/\(s.userId)"
            if !out.contains(line) { out.append(line) }
        }
        return out
    }

    @Test func selectorAgreesWithTheRules() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int.max)) { seed in
            var rng = SplitMix64(seed: UInt64(seed))
            func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &rng)] }
            let users = ["0", "1", "2", "3"]
            let cultures = ["ru-RU", "ru-ru", "ru", "en-US", "RU", "en"]
            let zones = ["w1", "yessplay", "z"]
            let tags = ["payments", "account", "news"]
            var filters: [EventFilter] = []
            for _ in 0..<Int.random(in: 0...5, using: &rng) {
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: filters.append(EventFilter(name: .userId, value: pick(users)))
                case 1: filters.append(EventFilter(name: .cultureId, value: pick(cultures)))
                case 2: filters.append(EventFilter(name: .zoneId, value: pick(zones)))
                case 3: filters.append(EventFilter(name: .branchId, value: pick(["101", "102"])))
                default: filters.append(EventFilter(name: FilterName(rawValue: "Other"), value: "x"))
                }
            }
            let event = Event(id: "E", type: pick(EventType.allCases), dateTime: EventTimestamp(ticksSinceEpoch: 0, utcOffsetSeconds: 0), filters: filters)
            let subs = (0..<Int.random(in: 0...12, using: &rng)).map { _ in
                Subscription(
                    deviceId: pick(["d1", "d2", "d3"]), token: "t", platform: pick(Platform.allCases), userId: pick(["1", "2", "3"]),
                    culture: pick(cultures), zoneId: Bool.random(using: &rng) ? pick(zones) : nil,
                    branchId: Bool.random(using: &rng) ? pick(["101", "102"]) : nil,
                    tags: Set((0..<Int.random(in: 0...2, using: &rng)).map { _ in pick(tags) }),
                    mutedTags: Set((0..<Int.random(in: 0...1, using: &rng)).map { _ in pick(tags) }),
                    isEnabled: Int.random(in: 0..<5, using: &rng) > 0
                )
            }
            let tag: String? = Bool.random(using: &rng) ? pick(tags) : nil
            let expected = Self.reference(event, tag: tag, subs)
            let actual = try? RecipientSelector().select(event, tag: tag, from: subs).map {
                "\($0.subscription.platform)/\($0.subscription.deviceId)/\($0.addressedUserId)"
            }
            #expect(actual == expected, "\(event.filters) \(event.type) tag \(String(describing: tag))")
        }
    }
}
