import Foundation
import PropertyBased
import Testing

@testable import HeraldCore

@Suite struct PayloadBuilderTests {
    /// 2014-04-30T14:32:47Z: the seed sample's instant, whole seconds.
    static let now = Date(timeIntervalSince1970: 1_398_868_367)
    static let key = DeliveryKey(messageKey: "seed-000-sample", deviceId: "device-1", userId: "119973638970")

    static func event(_ id: String, type: EventType = .message, params: [EventParameter] = SeedSamples.event.params) -> Event {
        var e = SeedSamples.event
        e.id = id
        e.type = type
        e.params = params
        return e
    }

    static func target(_ platform: Platform) -> PushTarget {
        PushTarget(platform: platform, token: platform == .ios ? "apns-token-1" : "fcm-token-1", userId: "119973638970")
    }

    func payload(
        _ eventId: String, _ platform: Platform, _ profile: PayloadProfile, culture: String = "ru-RU", type: EventType = .message,
        style: APNsAlertStyle = .text, badge: Int? = nil, legacyExtras: Bool = true
    ) throws -> PushPayload {
        let catalog = try RepositoryFiles.shippedCatalog()
        let event = Self.event(eventId, type: type)
        let rendered = try catalog.render(event, culture: culture, platform: platform)
        return try PayloadBuilder(profile: profile, apnsAlertStyle: style, legacyExtras: legacyExtras)
            .build(rendered, event: event, target: Self.target(platform), deliveryKey: Self.key, now: Self.now, badge: badge)
    }

    /// Compares the payload body byte for byte with `Golden/<name>.json` (canonical JSON and a
    /// newline). `HERALD_UPDATE_GOLDEN=1` rewrites the file instead; a missing file fails.
    func checkGolden(_ payload: PushPayload, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try RepositoryFiles.checkGolden(payload.body + [0x0A], name + ".json", sourceLocation: sourceLocation)
        // Goldens are valid JSON for Foundation too.
        #expect((try? JSONSerialization.jsonObject(with: Data(payload.body))) != nil, sourceLocation: sourceLocation)
    }

    /// With `worker.legacy_extras` off, the legacy shapes are seed 000's, byte for byte.
    @Test func exactLegacyAppleShapeIsTheSeeds() throws {
        let p = try payload("TransferIssued", .ios, .legacy, legacyExtras: false)
        try checkGolden(p, "legacy-ios-TransferIssued-ru")
        #expect(p.json["aps"]?["alert"] == .string("Вам поступил перевод."))
        #expect(p.json["aps"]?["acme_eid"] == .string("TransferIssued"))
        #expect(p.json["aps"]?["acme_userid"] == .string("119973638970"))
        #expect(
            p.json["aps"]?["acme_params"]
                == .array(["v1", "v2", "v3"].enumerated().map { .object(["name": .string("n\($0.offset + 1)"), "value": .string($0.element)]) }))
        #expect(p.apns == APNsRequestOptions(pushType: .alert, priority: 10, expiration: 1_398_868_367 + 86_400, collapseId: Self.key.rawValue))
        #expect(!p.wasShortened)
        try checkGolden(try payload("TransferIssued", .ios, .legacy, culture: "en-US", legacyExtras: false), "legacy-ios-TransferIssued-en")
    }

    @Test func modernPayloadsCarryThePositionAndLegacyOnesKeepTheSeedShape() throws {
        let catalog = try RepositoryFiles.shippedCatalog()
        let event = Self.event("TransferIssued")
        for platform in Platform.allCases {
            let rendered = try catalog.render(event, culture: "ru-RU", platform: platform)
            let modern = try PayloadBuilder(profile: .modern)
                .build(rendered, event: event, target: Self.target(platform), deliveryKey: Self.key, now: Self.now, position: 42)
            let legacy = try PayloadBuilder(profile: .legacy)
                .build(rendered, event: event, target: Self.target(platform), deliveryKey: Self.key, now: Self.now, position: 42)
            let withoutPosition = try PayloadBuilder(profile: .legacy)
                .build(rendered, event: event, target: Self.target(platform), deliveryKey: Self.key, now: Self.now)
            switch platform {
            case .ios: #expect(modern.json["pos"] == .int(42))
            case .android: #expect(modern.json["message"]?["data"]?["pos"] == .string("42"))
            }
            #expect(legacy.body == withoutPosition.body)
        }
    }

    /// The unread badge: modern always, legacy only with `legacyBadge` (and then the fast path
    /// is still the canonical serialization); without it, legacy bodies do not change.
    @Test func theBadgeIsInModernPayloadsAndInLegacyOnesOnlyWhenSwitchedOn() throws {
        let catalog = try RepositoryFiles.shippedCatalog()
        let event = Self.event("TransferIssued")
        for platform in Platform.allCases {
            let rendered = try catalog.render(event, culture: "ru-RU", platform: platform)
            func build(_ builder: PayloadBuilder, badge: Int?) throws -> PushPayload {
                try builder.build(rendered, event: event, target: Self.target(platform), deliveryKey: Self.key, now: Self.now, badge: badge)
            }
            let modern = try build(PayloadBuilder(profile: .modern), badge: 7)
            let legacyOff = try build(PayloadBuilder(profile: .legacy), badge: 7)
            let legacyNone = try build(PayloadBuilder(profile: .legacy), badge: nil)
            let legacyOn = try build(PayloadBuilder(profile: .legacy, legacyBadge: true), badge: 7)
            #expect(legacyOff.body == legacyNone.body, "the switch is off: the seed 000 shape, byte for byte")
            #expect(PayloadBuilder(profile: .modern).carriesBadge && !PayloadBuilder(profile: .legacy).carriesBadge)
            #expect(PayloadBuilder(profile: .legacy, legacyBadge: true).carriesBadge)
            // The fast path's bytes are the canonical serialization of the same value.
            #expect(legacyOn.body == legacyOn.json.serialized())
            switch platform {
            case .ios:
                #expect(modern.json["aps"]?["badge"] == .int(7))
                #expect(legacyOn.json["aps"]?["badge"] == .int(7))
                #expect(legacyOn.json["aps"]?["acme_eid"] == .string("TransferIssued"))
            case .android:
                #expect(modern.json["message"]?["data"]?["badge"] == .string("7"))
                #expect(legacyOn.json["message"]?["data"]?["badge"] == .string("7"))
                #expect(legacyOn.json["message"]?["data"]?["msg"] != nil)
            }
        }
    }

    @Test func exactLegacyAndroidShapeIsTheSeeds() throws {
        let p = try payload("TransferIssued", .android, .legacy, legacyExtras: false)
        try checkGolden(p, "legacy-android-TransferIssued-ru")
        let data = try #require(p.json["message"]?["data"])
        #expect(
            data
                == .object([
                    "msg": .string("Вам поступил перевод."),
                    "eid": .string("TransferIssued"),
                    "userid": .string("119973638970"),
                    "params": .string(#"[{"name":"n1","value":"v1"},{"name":"n2","value":"v2"},{"name":"n3","value":"v3"}]"#),
                ]))
        #expect(p.json["message"]?["token"] == .string("fcm-token-1"))
        #expect(p.apns == nil)
    }

    @Test func modernApple() throws {
        let money = try payload("TransferIssued", .ios, .modern, badge: 3)
        try checkGolden(money, "modern-ios-TransferIssued-ru")
        #expect(money.json["aps"]?["mutable-content"] == .int(1), "private")
        #expect(money.json["aps"]?["sound"] == .string("default"))
        #expect(money.json["aps"]?["thread-id"] == .string("transfers"))
        #expect(money.json["aps"]?["badge"] == .int(3))
        #expect(money.json["params"] == .array([.string("v1"), .string("v2"), .string("v3")]))

        let quiet = try payload("UserStateIsActive", .ios, .modern, culture: "en-US")
        try checkGolden(quiet, "modern-ios-UserStateIsActive-en")
        #expect(quiet.apns?.priority == 5)
        #expect(quiet.json["aps"]?["sound"] == nil)

        let localized = try payload("InvoiceIssuedByMerch", .ios, .modern, style: .localizationKey)
        try checkGolden(localized, "modern-ios-InvoiceIssuedByMerch-lockey")
        #expect(localized.json["aps"]?["alert"]?["loc-key"] == .string("InvoiceIssuedByMerch"))
        #expect(localized.json["aps"]?["alert"]?["body"] == nil)

        let silent = try payload("UserStateIsActive", .ios, .modern, type: .system)
        try checkGolden(silent, "modern-ios-UserStateIsActive-system")
        #expect(silent.json["aps"] == .object(["content-available": .int(1)]))
        #expect(silent.apns == APNsRequestOptions(pushType: .background, priority: 5, expiration: 1_398_868_367 + 86_400, collapseId: Self.key.rawValue))
    }

    @Test func modernAndroid() throws {
        let money = try payload("TransferIssued", .android, .modern)
        try checkGolden(money, "modern-android-TransferIssued-ru")
        #expect(money.json["message"]?["notification"] == nil, "private events are data-only")
        #expect(money.json["message"]?["data"]?["private"] == .string("1"))
        #expect(!money.serializedString.contains("Вам поступил"), "no sensitive text on the wire")

        let blocked = try payload("UserStateIsBlocked", .android, .modern)
        try checkGolden(blocked, "modern-android-UserStateIsBlocked-ru")
        #expect(
            blocked.json["message"]?["notification"] == .object(["title": .string("Wallet One"), "body": .string("Приостановление операций по кошельку.")]))
        #expect(blocked.json["message"]?["android"]?["priority"] == .string("HIGH"))
        #expect(blocked.json["message"]?["android"]?["ttl"] == .string("86400s"))
        #expect(blocked.json["message"]?["android"]?["collapse_key"] == nil)

        let silent = try payload("UserStateIsBlocked", .android, .modern, type: .system)
        #expect(silent.json["message"]?["notification"] == nil)
        #expect(silent.json["message"]?["android"]?["priority"] == .string("NORMAL"))
        #expect(silent.json["message"]?["data"]?["silent"] == .string("1"))

        let catalog = try RepositoryFiles.shippedCatalog()
        let event = Self.event("UserStateIsBlocked")
        let withCollapse = try PayloadBuilder(profile: .modern, fcmCollapseKey: true).build(
            try catalog.render(event, culture: "ru-RU", platform: .android), event: event, target: Self.target(.android), deliveryKey: Self.key, now: Self.now)
        #expect(withCollapse.json["message"]?["android"]?["collapse_key"] == .string(Self.key.rawValue))
    }

    /// A visible FCM message names its channel with its sound in `android.notification`; a
    /// data-only one (private or silent) in `data.channel`, where the app that builds the
    /// notification reads it.
    @Test func modernAndroidNamesTheChannelInTheNotificationOrInTheData() throws {
        let event = Self.event("E")
        func build(isPrivate: Bool, silent: Bool = false) throws -> PushPayload {
            let metadata = EventMetadata(eventId: "E", priority: .high, sound: "default", androidChannel: "money_in", isPrivate: isPrivate)
            let rendered = RenderedNotification(
                eventId: "E", culture: "ru-RU", platform: .android, title: "Wallet One", body: "b", metadata: metadata, isSilent: silent)
            return try PayloadBuilder(profile: .modern).build(rendered, event: event, target: Self.target(.android), deliveryKey: Self.key, now: Self.now)
        }
        let visible = try build(isPrivate: false)
        #expect(visible.json["message"]?["android"]?["notification"] == .object(["channel_id": .string("money_in"), "sound": .string("default")]))
        #expect(visible.json["message"]?["data"]?["channel"] == nil)
        for hidden in [try build(isPrivate: true), try build(isPrivate: false, silent: true)] {
            #expect(hidden.json["message"]?["notification"] == nil)
            #expect(hidden.json["message"]?["android"]?["notification"] == nil)
            #expect(hidden.json["message"]?["data"]?["channel"] == .string("money_in"))
        }
    }

    /// The legacy extras are part of the shape, not of the fast path: a body shortened to fit
    /// keeps them, and a silent event gets no sound.
    @Test func legacyExtrasSurviveShorteningAndSilenceTakesTheSound() throws {
        let metadata = EventMetadata(eventId: "E", targetScreen: .timeline, priority: .high, sound: "default", androidChannel: "money_in")
        for platform in Platform.allCases {
            for silent in [false, true] {
                let rendered = RenderedNotification(
                    eventId: "E", culture: "ru-RU", platform: platform, title: "", body: String(repeating: "ж", count: 5_000), metadata: metadata,
                    isSilent: silent)
                let p = try PayloadBuilder(profile: .legacy).build(
                    rendered, event: Self.event("E"), target: Self.target(platform), deliveryKey: Self.key, now: Self.now)
                #expect(p.wasShortened)
                switch platform {
                case .ios:
                    #expect(p.json["aps"]?["acme_screen"] == .string("timeline"))
                    #expect(p.json["aps"]?["sound"] == (silent ? nil : .string("default")))
                case .android:
                    #expect(p.json["message"]?["data"]?["screen"] == .string("timeline"))
                    #expect(p.json["message"]?["data"]?["channel"] == .string("money_in"))
                }
            }
        }
    }

    @Test func everyShippedEventBuildsOnEveryPlatformAndProfile() throws {
        let catalog = try RepositoryFiles.shippedCatalog()
        for row in TemplateCatalogTests.tableTwo {
            for platform in Platform.allCases {
                for profile in PayloadProfile.allCases {
                    for culture in ["ru-RU", "en-US"] {
                        let event = Self.event(row.id)
                        let rendered = try catalog.render(event, culture: culture, platform: platform)
                        let p = try PayloadBuilder(profile: profile).build(
                            rendered, event: event, target: Self.target(platform), deliveryKey: Self.key, now: Self.now)
                        #expect(p.body.count <= 4096)
                        #expect((try? JSONParser.parse(p.body, limits: .init(maxDepth: 16))) == p.json)
                    }
                }
            }
        }
    }

    @Test func mismatchedPlatformIsRefused() throws {
        let catalog = try RepositoryFiles.shippedCatalog()
        let event = Self.event("TransferIssued")
        let rendered = try catalog.render(event, culture: "ru-RU", platform: .ios)
        #expect {
            try PayloadBuilder(profile: .legacy).build(rendered, event: event, target: Self.target(.android), deliveryKey: Self.key, now: Self.now)
        } throws: { ($0 as? PayloadError)?.code == .platformMismatch }
    }

    // MARK: - Limits

    func build(
        body: String, params: [EventParameter] = [], _ platform: Platform, _ profile: PayloadProfile, limit: Int = 4096, isPrivate: Bool = false
    ) throws(PayloadError) -> PushPayload {
        let event = Self.event("E", params: params)
        let metadata = EventMetadata(eventId: "E", tag: "t", priority: .high, isPrivate: isPrivate)
        let rendered = RenderedNotification(
            eventId: "E", culture: "ru-RU", platform: platform, title: "Wallet One", body: body, metadata: metadata, isSilent: false)
        return try PayloadBuilder(profile: profile, limits: PayloadLimits(apnsMaxBytes: limit, fcmMaxBytes: limit))
            .build(rendered, event: event, target: Self.target(platform), deliveryKey: Self.key, now: Self.now)
    }

    /// The size that the provider's limit applies to.
    func countedSize(_ p: PushPayload) -> Int {
        if p.platform == .ios { return p.body.count }
        let message = p.json["message"]!
        return (message["data"]?.serializedByteCount ?? 0) + (message["notification"]?.serializedByteCount ?? 0)
    }

    func shortenedBody(_ p: PushPayload) -> String {
        switch (p.platform, p.profile) {
        case (.ios, .legacy): p.json["aps"]!["alert"]!.stringValue!
        case (.android, .legacy): p.json["message"]!["data"]!["msg"]!.stringValue!
        case (.ios, .modern): p.json["aps"]!["alert"]!["body"]!.stringValue!
        case (.android, .modern): p.json["message"]!["notification"]!["body"]!.stringValue!
        }
    }

    @Test(arguments: [(Platform.ios, PayloadProfile.legacy), (.android, .legacy), (.ios, .modern), (.android, .modern)])
    func oversizedBodiesAreShortenedToTheLimit(_ platform: Platform, _ profile: PayloadProfile) throws {
        let body = String(repeating: "ж", count: 5_000)
        let p = try build(body: body, platform, profile)
        #expect(p.wasShortened)
        let size = countedSize(p)
        #expect(size <= 4096 && size > 4096 - 3, "longest body that fits: \(size)")
        let text = shortenedBody(p)
        #expect(text.hasSuffix("…"))
        #expect(body.hasPrefix(text.dropLast()))
    }

    @Test func shorteningKeepsGraphemeClustersAndEscapesWhole() throws {
        let family = "👨‍👩‍👧‍👦"
        let p = try build(body: String(repeating: family, count: 400), .ios, .legacy)
        let text = shortenedBody(p)
        #expect(text.dropLast().allSatisfy { String($0) == family })
        #expect(p.body.count <= 4096)

        let quotes = try build(body: String(repeating: "\"\n\u{01}", count: 2_000), .ios, .legacy)
        #expect(quotes.body.count <= 4096)
        #expect((try? JSONSerialization.jsonObject(with: Data(quotes.body))) != nil)

        let spaced = try build(body: String(repeating: "слово ", count: 1_000), .ios, .legacy)
        #expect(!shortenedBody(spaced).hasSuffix(" …"), "no space before the ellipsis")
    }

    @Test func impossibleFitsAreTypedErrors() {
        let bigParams = [EventParameter(name: "n", value: String(repeating: "x", count: 5_000))]
        for (platform, profile) in [(Platform.ios, PayloadProfile.legacy), (.android, .legacy), (.ios, .modern), (.android, .modern)] {
            #expect { try build(body: "short", params: bigParams, platform, profile) } throws: {
                let e = $0 as? PayloadError
                return e?.code == .tooLarge && e?.description.contains("limit of 4096") == true && e?.description.contains("xxxx") == false
            }
        }
        #expect { try build(body: "short", params: bigParams, .android, .modern, isPrivate: true) } throws: { ($0 as? PayloadError)?.code == .tooLarge }
    }

    /// Random bodies (emoji, combining marks, controls, quotes) and random limits: the payload
    /// always fits and is valid JSON, and its body is the original or a prefix of it plus "…";
    /// or the builder says tooLarge.
    @Test func randomBodiesAlwaysFitAsValidJSON() async {
        let pool: [String] = ["a", " ", "ж", "€", "😀", "👨‍👩‍👧", "e\u{301}", "\"", "\\", "\n", "\u{01}", "\u{2028}", "🇷🇺", "{0}"]
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int.max), Gen.int(in: 150...4096)) { seed, limit in
            var rng = SplitMix64(seed: UInt64(seed))
            let body = (0..<Int.random(in: 0...1_500, using: &rng)).map { _ in pool[Int.random(in: 0..<pool.count, using: &rng)] }.joined()
            for (platform, profile) in [(Platform.ios, PayloadProfile.legacy), (.android, .legacy), (.ios, .modern), (.android, .modern)] {
                do throws(PayloadError) {
                    let p = try build(body: body, platform, profile, limit: limit)
                    #expect(countedSize(p) <= limit)
                    #expect((try? JSONParser.parse(p.body, limits: .init(maxDepth: 16))) == p.json)
                    #expect((try? JSONSerialization.jsonObject(with: Data(p.body))) != nil)
                    let text = shortenedBody(p)
                    if p.wasShortened {
                        var prefix = String(text.dropLast())
                        #expect(text.hasSuffix("…"))
                        while let last = prefix.last, last.isWhitespace { prefix.removeLast() }
                        #expect(body.hasPrefix(prefix))
                    } else {
                        #expect(text == body)
                    }
                } catch {
                    #expect(error.code == .tooLarge)
                }
            }
        }
    }

    /// The log keeps no device tokens: an FCM body is logged without `message.token`, an APNs
    /// body as it is.
    @Test func loggedBodiesHaveNoToken() throws {
        for profile in [PayloadProfile.legacy, .modern] {
            let android = try payload("TransferIssued", .android, profile)
            var expected = android.json
            guard case .object(var root) = expected, case .object(var message)? = root["message"] else {
                Issue.record("not an FCM body")
                continue
            }
            #expect(message.removeValue(forKey: "token") == .string("fcm-token-1"))
            root["message"] = .object(message)
            expected = .object(root)
            #expect(android.loggedBody == expected.serialized())
            let ios = try payload("TransferIssued", .ios, profile)
            #expect(ios.loggedBody == ios.body)
        }
    }

    /// The legacy shapes are written straight into bytes on the hot path: byte for byte the
    /// canonical serialization of the same values (escaping, key order, options, the extras or
    /// none), for random texts, parameters, users, tokens, sounds, screens and channels.
    @Test func legacyFastPathIsTheCanonicalSerialization() async {
        let pool: [String] = ["a", "Z", " ", "ж", "€", "😀", "e\u{301}", "\"", "\\", "/", "\n", "\r", "\t", "\u{01}", "\u{1F}", "\u{2028}", "{0}", "_"]
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var rng = SplitMix64(seed: UInt64(seed))
            func text(_ max: Int) -> String {
                (0..<Int.random(in: 0...max, using: &rng)).map { _ in pool[Int.random(in: 0..<pool.count, using: &rng)] }.joined()
            }
            let params = (0..<Int.random(in: 0...4, using: &rng)).map { _ in EventParameter(name: text(6), value: text(12)) }
            let event = Self.event(text(10).isEmpty ? "E" : "TransferIssued", params: params)
            let target = PushTarget(platform: .android, token: text(20), userId: text(8))
            var metadata = EventMetadata.defaults(for: event.id)
            metadata.priority = Bool.random(using: &rng) ? .high : .normal
            metadata.timeToLiveSeconds = Bool.random(using: &rng) ? Int.random(in: 0...100_000, using: &rng) : nil
            metadata.sound = Bool.random(using: &rng) ? text(8) : nil
            metadata.targetScreen = Bool.random(using: &rng) ? TargetScreen(rawValue: text(8)) : nil
            metadata.androidChannel = Bool.random(using: &rng) ? text(8) : nil
            let silent = Int.random(in: 0..<4, using: &rng) == 0
            let extras = Bool.random(using: &rng)
            let body = text(200)
            let collapse = Bool.random(using: &rng)
            for platform in Platform.allCases {
                let rendered = RenderedNotification(
                    eventId: event.id, culture: "ru-RU", platform: platform, title: "", body: body, metadata: metadata, isSilent: silent)
                let target = PushTarget(platform: platform, token: target.token, userId: target.userId)
                guard
                    let payload = try? PayloadBuilder(profile: .legacy, fcmCollapseKey: collapse, legacyExtras: extras)
                        .build(rendered, event: event, target: target, deliveryKey: Self.key, now: Self.now)
                else { Issue.record("a small legacy payload must build"); continue }
                let paramsValue = JSONValue.array(params.map { .object(["name": .string($0.name), "value": .string($0.value)]) })
                let expected: JSONValue
                switch platform {
                case .ios:
                    var aps: [String: JSONValue] = [
                        "acme_eid": .string(event.id), "acme_params": paramsValue, "acme_userid": .string(target.userId), "alert": .string(body),
                    ]
                    if extras, let screen = metadata.targetScreen { aps["acme_screen"] = .string(screen.rawValue) }
                    if extras, !silent, let sound = metadata.sound { aps["sound"] = .string(sound) }
                    expected = .object(["aps": .object(aps)])
                case .android:
                    var android: [String: JSONValue] = ["priority": .string(metadata.priority == .high ? "HIGH" : "NORMAL")]
                    if let ttl = metadata.timeToLiveSeconds { android["ttl"] = .string("\(ttl)s") }
                    if collapse { android["collapse_key"] = .string(Self.key.rawValue) }
                    var data: [String: JSONValue] = [
                        "eid": .string(event.id), "msg": .string(body), "params": .string(paramsValue.serializedString()), "userid": .string(target.userId),
                    ]
                    if extras, let screen = metadata.targetScreen { data["screen"] = .string(screen.rawValue) }
                    if extras, let channel = metadata.androidChannel { data["channel"] = .string(channel) }
                    expected = .object(["message": .object(["android": .object(android), "token": .string(target.token), "data": .object(data)])])
                }
                #expect(payload.body == expected.serialized(), "\(platform): \(payload.serializedString)")
            }
        }
    }
}

extension PushPayload {
    var serializedString: String { String(decoding: self.body, as: UTF8.self) }
}
