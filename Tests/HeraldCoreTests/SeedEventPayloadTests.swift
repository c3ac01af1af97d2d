import Foundation
import Testing

@testable import HeraldCore

/// The payload of each of seed 000's 20 events (Herald's own templates, culture ru-RU, the seed
/// sample's parameters) in every profile on both platforms: byte for byte against
/// `Golden/SeedEvents/<variant>-<platform>.jsonl` (one body per line, in table 2's order), and
/// key by key against the event's metadata, so that a change of shape shows in review and a
/// requirement that goes missing fails by name.
@Suite struct SeedEventPayloadTests {
    /// The payload shapes a deployment can choose.
    enum Variant: String, CaseIterable, CustomTestStringConvertible {
        /// The default: `worker.payload_profile: legacy`, `worker.legacy_extras: true`.
        case legacy
        /// `worker.legacy_extras: false`: seed 000's exact bytes.
        case legacyExact = "legacy-exact"
        case modern

        var builder: PayloadBuilder {
            switch self {
            case .legacy: PayloadBuilder(profile: .legacy)
            case .legacyExact: PayloadBuilder(profile: .legacy, legacyExtras: false)
            case .modern: PayloadBuilder(profile: .modern)
            }
        }

        var testDescription: String { rawValue }
    }

    /// The events of table 2 with their payloads for `platform`.
    static func payloads(_ variant: Variant, _ platform: Platform) throws -> [(metadata: EventMetadata, payload: PushPayload)] {
        let catalog = try RepositoryFiles.shippedCatalog()
        return try TemplateCatalogTests.tableTwo.map { row in
            let event = PayloadBuilderTests.event(row.id)
            let rendered = try catalog.render(event, culture: "ru-RU", platform: platform)
            let payload = try variant.builder.build(
                rendered, event: event, target: PayloadBuilderTests.target(platform), deliveryKey: PayloadBuilderTests.key, now: PayloadBuilderTests.now)
            return (rendered.metadata, payload)
        }
    }

    @Test(arguments: Variant.allCases, Platform.allCases)
    func everySeedEventMatchesItsGolden(_ variant: Variant, _ platform: Platform) throws {
        let payloads = try Self.payloads(variant, platform)
        #expect(payloads.count == 20)
        var lines: [UInt8] = []
        for (_, payload) in payloads { lines += payload.body + [0x0A] }
        try RepositoryFiles.checkGolden(lines, "SeedEvents/\(variant.rawValue)-\(platform.rawValue).jsonl")
    }

    /// The legacy profile by default: the seed's keys, plus `aps.sound` where the event has a
    /// sound, the screen next to the seed's keys, the channel on Android; the priority from the
    /// metadata on both platforms.
    @Test func theDefaultLegacyProfileCarriesSoundScreenChannelAndPriority() throws {
        for (metadata, p) in try Self.payloads(.legacy, .ios) {
            let aps = try #require(p.json["aps"])
            #expect(aps["acme_eid"] == .string(metadata.eventId))
            #expect(aps["alert"]?.stringValue?.isEmpty == false, "the seed's alert is a string")
            #expect(aps["sound"] == metadata.sound.map(JSONValue.string), "\(metadata.eventId): requirement 5")
            #expect(aps["acme_screen"] == metadata.targetScreen.map { .string($0.rawValue) }, "\(metadata.eventId): table 2's screen")
            #expect(p.apns?.priority == (metadata.priority == .high ? 10 : 5), "\(metadata.eventId): requirement 13")
            #expect(p.json["screen"] == nil && p.json["eid"] == nil, "nothing outside aps: the seed has nothing there")
        }
        for (metadata, p) in try Self.payloads(.legacy, .android) {
            let message = try #require(p.json["message"])
            let data = try #require(message["data"])
            #expect(data["eid"] == .string(metadata.eventId))
            #expect(data["msg"]?.stringValue?.isEmpty == false)
            #expect(data["screen"] == metadata.targetScreen.map { .string($0.rawValue) }, "\(metadata.eventId)")
            #expect(data["channel"] == metadata.androidChannel.map(JSONValue.string), "\(metadata.eventId)")
            #expect(message["notification"] == nil, "legacy Android messages stay data-only: the app builds the notification")
            #expect(message["android"]?["priority"] == .string(metadata.priority == .high ? "HIGH" : "NORMAL"), "\(metadata.eventId)")
        }
    }

    /// `worker.legacy_extras: false`: exactly the seed's keys, nothing else.
    @Test func theExactLegacyProfileHasTheSeedsKeysOnly() throws {
        for (metadata, p) in try Self.payloads(.legacyExact, .ios) {
            guard case .object(let root) = p.json, case .object(let aps)? = root["aps"] else {
                Issue.record("\(metadata.eventId): not an aps object")
                continue
            }
            #expect(Set(root.keys) == ["aps"])
            #expect(Set(aps.keys) == ["alert", "acme_eid", "acme_userid", "acme_params"], "\(metadata.eventId)")
        }
        for (metadata, p) in try Self.payloads(.legacyExact, .android) {
            guard case .object(let data)? = p.json["message"]?["data"] else {
                Issue.record("\(metadata.eventId): no data")
                continue
            }
            #expect(Set(data.keys) == ["msg", "eid", "userid", "params"], "\(metadata.eventId)")
        }
    }

    /// The modern profile names the channel where FCM allows: `android.notification.channel_id`
    /// on a visible message, `data.channel` on a data-only one (private events).
    @Test func theModernProfileNamesTheChannelWhereTheMessageHasRoom() throws {
        for (metadata, p) in try Self.payloads(.modern, .android) {
            let message = try #require(p.json["message"])
            let dataOnly = message["notification"] == nil
            #expect(dataOnly == metadata.isPrivate, "\(metadata.eventId)")
            let channel = metadata.androidChannel.map(JSONValue.string)
            #expect(message["data"]?["channel"] == (dataOnly ? channel : nil), "\(metadata.eventId)")
            #expect(message["android"]?["notification"]?["channel_id"] == (dataOnly ? nil : channel), "\(metadata.eventId)")
            #expect(message["data"]?["screen"] == metadata.targetScreen.map { .string($0.rawValue) })
        }
        for (metadata, p) in try Self.payloads(.modern, .ios) {
            #expect(p.json["aps"]?["sound"] == metadata.sound.map(JSONValue.string), "\(metadata.eventId)")
            #expect(p.json["screen"] == metadata.targetScreen.map { .string($0.rawValue) }, "\(metadata.eventId)")
        }
    }
}
