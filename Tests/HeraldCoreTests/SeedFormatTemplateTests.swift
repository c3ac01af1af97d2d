import Foundation
import HeraldTesting
import Testing

@testable import HeraldCore

/// Seed 000's own `.resx` format: one resource per event holding its body, and no title.
@Suite struct SeedFormatTemplateTests {
    static let seedResx = SeedSampleDocuments.resx

    static let titled = """
        <root>
          <data name="Paid"><value>Paid {0}</value></data>
          <data name="Paid.Title"><value>Wallet</value></data>
        </root>
        """

    static func source(_ fileName: String, _ text: String) -> TemplateSource {
        TemplateSource(fileName: fileName, contents: Array(text.utf8))
    }

    static let balance = Event(
        id: "balance", type: .message, dateTime: SeedSamples.event.dateTime, filters: [EventFilter(name: .userId, value: "119973638970")],
        params: [EventParameter(name: "user", value: "119973638970"), EventParameter(name: "amount", value: "100.00")]
    )

    static func build(_ rendered: RenderedNotification, _ profile: PayloadProfile, style: APNsAlertStyle = .text) throws -> PushPayload {
        let target = PushTarget(platform: rendered.platform, token: "token-1", userId: "119973638970")
        let key = DeliveryKey(messageKey: "m", deviceId: "d", userId: "119973638970")
        return try PayloadBuilder(profile: profile, apnsAlertStyle: style).build(rendered, event: balance, target: target, deliveryKey: key, now: Date())
    }

    @Test func aTextWithoutATitleImportsWithNone() throws {
        let templates = try TemplateBundle.templates(
            resx: [Self.source("AppleMessages.ru-RU.resx", Self.seedResx), Self.source("AndroidMessages.ru-RU.resx", Self.seedResx)], metadata: []
        )
        #expect(templates.map(\.eventId) == ["balance", "balance"])
        #expect(templates.map(\.title) == ["", ""])
        #expect(templates.map(\.body) == ["Баланс пользователя {0}: {1}", "Баланс пользователя {0}: {1}"])
    }

    @Test func oneFileWithoutTitlesLeavesTheOthersUsable() throws {
        let catalog = try TemplateBundle.catalog(
            files: [Self.source("AppleMessages.ru-RU.resx", Self.titled), Self.source("AndroidMessages.ru-RU.resx", Self.seedResx)],
            defaultCulture: "ru-RU"
        )
        #expect(catalog.problems.isEmpty)
        var paid = Self.balance
        paid.id = "Paid"
        let titled = try catalog.render(paid, culture: "ru-RU", platform: .ios)
        #expect(titled.title == "Wallet")
        #expect(titled.body == "Paid 119973638970")
        let untitled = try catalog.render(Self.balance, culture: "ru-RU", platform: .android)
        #expect(untitled.title == "")
        #expect(untitled.body == "Баланс пользователя 119973638970: 100.00")
    }

    @Test(arguments: Platform.allCases)
    func legacyPayloadsCarryTheBodyAndNoTitle(_ platform: Platform) throws {
        let catalog = try TemplateBundle.catalog(
            files: [Self.source(TemplateFileName(platform: platform, culture: "ru-RU").fileName, Self.seedResx)], defaultCulture: "ru-RU")
        let payload = try Self.build(try catalog.render(Self.balance, culture: "ru-RU", platform: platform), .legacy)
        let text = payload.json.serializedString()
        #expect(text.contains("Баланс пользователя 119973638970: 100.00"))
        #expect(!text.contains("title"))
    }

    @Test func aModernPayloadWithoutATitleSendsTheBodyAlone() throws {
        let catalog = try TemplateBundle.catalog(
            files: [Self.source("AppleMessages.ru-RU.resx", Self.seedResx), Self.source("AndroidMessages.ru-RU.resx", Self.seedResx)], defaultCulture: "ru-RU"
        )
        let body = JSONValue.string("Баланс пользователя 119973638970: 100.00")
        let apple = try Self.build(try catalog.render(Self.balance, culture: "ru-RU", platform: .ios), .modern)
        #expect(apple.json["aps"]?["alert"] == .object(["body": body]))
        let localized = try Self.build(try catalog.render(Self.balance, culture: "ru-RU", platform: .ios), .modern, style: .localizationKey)
        #expect(localized.json["aps"]?["alert"]?["title"] == nil)
        #expect(localized.json["aps"]?["alert"]?["loc-key"] == .string("balance"))
        let android = try Self.build(try catalog.render(Self.balance, culture: "ru-RU", platform: .android), .modern)
        #expect(android.json["message"]?["notification"] == .object(["body": body]))
    }
}
