import Testing

@testable import HeraldCore

@Suite struct RecipientSelectorTests {
    let selector = RecipientSelector()

    func sub(
        _ device: String, _ user: String, platform: Platform = .ios, culture: String = "ru-ru", zone: String? = "w1", branch: String? = "101",
        tags: Set<String> = [], muted: Set<String> = [], enabled: Bool = true
    ) -> Subscription {
        Subscription(
            deviceId: device, token: "tok-\(device)", platform: platform, userId: user, culture: culture, zoneId: zone, branchId: branch,
            tags: tags, mutedTags: muted, isEnabled: enabled)
    }

    func event(_ filters: [(FilterName, String)], type: EventType = .message) -> Event {
        Event(id: "TransferIssued", type: type, dateTime: SeedSamples.event.dateTime, filters: filters.map { EventFilter(name: $0.0, value: $0.1) })
    }

    func pick(_ event: Event, tag: String? = nil, _ subs: [Subscription]) throws(RecipientSelectionError) -> [String] {
        try selector.select(event, tag: tag, from: subs).map { "\($0.subscription.deviceId)/\($0.addressedUserId)" }
    }

    @Test func seedSampleSelectsItsUsersInItsZonesAndCulture() throws {
        let subs = [
            sub("d1", "119973638970"),
            sub("d2", "119973638971", zone: "yessplay"),
            sub("d3", "119973638972", zone: "other"),
            sub("d4", "119973638972", culture: "en-us"),
            sub("d5", "119973638972", branch: "102"),
            sub("d6", "5"),
            sub("d7", "119973638972", zone: nil),
            sub("d8", "119973638972", platform: .android, culture: "RU-RU"),
        ]
        #expect(try pick(SeedSamples.event, subs) == ["d1/119973638970", "d2/119973638971", "d8/119973638972"])
    }

    /// Seed 000's case: wallet 1 and wallet 2, both subscribed on device 1 and device 2, each
    /// device receives each wallet's pushes.
    @Test func twoWalletsOnTwoDevices() throws {
        let subs = [sub("device1", "wallet1"), sub("device2", "wallet2"), sub("device1", "wallet2"), sub("device2", "wallet1")]
        #expect(try pick(event([(.userId, "wallet1")]), subs) == ["device1/wallet1", "device2/wallet1"])
        #expect(try pick(event([(.userId, "wallet2")]), subs) == ["device2/wallet2", "device1/wallet2"])
        #expect(
            try pick(event([(.userId, "wallet1"), (.userId, "wallet2")]), subs) == ["device1/wallet1", "device2/wallet2", "device1/wallet2", "device2/wallet1"])
        // A broadcast reaches each device once.
        #expect(try pick(event([], type: .news), subs) == ["device1/0", "device2/0"])
    }

    @Test func broadcastRules() throws {
        let subs = [sub("d1", "1"), sub("d2", "2", culture: "en-US")]
        #expect(try pick(event([(.userId, "0")], type: .message), subs) == ["d1/0", "d2/0"])
        #expect(try pick(event([(.userId, "7"), (.userId, "0")], type: .message), subs) == ["d1/0", "d2/0"], "0 among others still means everybody")
        #expect(try pick(event([(.cultureId, "en")], type: .news), subs) == ["d2/0"], "other filters still restrict a broadcast")
        #expect(throws: RecipientSelectionError.self) { try pick(event([(.zoneId, "w1")], type: .message), subs) }
        #expect(throws: RecipientSelectionError.self) { try pick(event([], type: .system), subs) }
        let lenient = RecipientSelector(policy: SelectionPolicy(broadcastNonNewsWithoutUserId: true))
        #expect(try lenient.select(event([], type: .system), tag: nil, from: subs).count == 2)
        do {
            _ = try pick(event([], type: .notification), subs)
        } catch {
            #expect(error.code == .noAddressee)
            #expect(error.description.contains("TransferIssued"))
        }
    }

    /// `validate` refuses what `select` refuses, without a subscription to look at.
    @Test func validateAgreesWithSelect() throws {
        let selector = RecipientSelector()
        try selector.validate(event([(.userId, "0")], type: .message))
        try selector.validate(event([(.userId, "7")]))
        #expect(throws: RecipientSelectionError.self) { try selector.validate(event([(.zoneId, "w1")], type: .message)) }
        #expect(throws: RecipientSelectionError.self) { try selector.validate(event([], type: .system)) }
        try RecipientSelector(policy: SelectionPolicy(broadcastNonNewsWithoutUserId: true)).validate(event([], type: .system))
    }

    @Test func cultureMatching() throws {
        let subs = [sub("a", "1", culture: "ru-RU"), sub("b", "1", culture: "ru"), sub("c", "1", culture: "en-US"), sub("d", "1", culture: "ru-KZ")]
        #expect(try pick(event([(.userId, "1"), (.cultureId, "ru-ru")]), subs) == ["a/1"])
        #expect(try pick(event([(.userId, "1"), (.cultureId, "RU")]), subs) == ["a/1", "b/1", "d/1"])
        #expect(try pick(event([(.userId, "1"), (.cultureId, "en-US"), (.cultureId, "ru-KZ")]), subs) == ["c/1", "d/1"])
    }

    @Test func tagsMutesAndTheSwitch() throws {
        let subs = [
            sub("all", "1"),
            sub("payments", "1", tags: ["payments", "account"]),
            sub("news", "1", tags: ["news"]),
            sub("muted", "1", muted: ["payments"]),
            sub("off", "1", enabled: false),
        ]
        let e = event([(.userId, "1")])
        #expect(try pick(e, tag: "payments", subs) == ["all/1", "payments/1"])
        #expect(try pick(e, tag: "news", subs) == ["all/1", "news/1", "muted/1"])
        #expect(try pick(e, tag: nil, subs) == ["all/1", "payments/1", "news/1", "muted/1"])
    }

    @Test func unknownFiltersDoNotRestrictAndDuplicatesCollapse() throws {
        let subs = [sub("d1", "1"), sub("d1", "1"), sub("d1", "1", platform: .android)]
        let e = event([(.userId, "1"), (FilterName(rawValue: "Segment"), "vip")])
        #expect(try pick(e, subs) == ["d1/1", "d1/1"])
        #expect(try selector.select(e, tag: nil, from: subs).map(\.subscription.platform) == [.ios, .android])
        #expect(try selector.matches(e, tag: nil, subscription: subs[0]))
    }

    @Test func recipientKeysAreStable() throws {
        let r = Recipient(subscription: sub("d1", "42"), addressedUserId: "42")
        #expect(r.orderingKey == OrderingKey(userId: "42", platform: r.subscription.platform))
        #expect(r.deliveryKey(messageKey: "m") == DeliveryKey(messageKey: "m", deviceId: "d1", userId: "42"))
        #expect(r.pushTarget == PushTarget(platform: .ios, token: "tok-d1", userId: "42"))

        // Two apps reporting the same hardware id get different keys; the default app keeps
        // the three-part key.
        var other = sub("d1", "42")
        other.app = "com.example.other"
        let inOtherApp = Recipient(subscription: other, addressedUserId: "42")
        #expect(inOtherApp.deliveryKey(messageKey: "m") != r.deliveryKey(messageKey: "m"))
        #expect(inOtherApp.deliveryKey(messageKey: "m") == DeliveryKey(messageKey: "m", deviceId: "d1", userId: "42", app: "com.example.other"))
        #expect(inOtherApp.pushTarget.app == "com.example.other")
    }
}
