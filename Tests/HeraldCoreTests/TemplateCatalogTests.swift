import Foundation
import Testing

@testable import HeraldCore

@Suite struct TemplateCatalogTests {
    /// The 20 event types of seed 000: the 19 rows of table 2 and `InvoiceIssuedToWallet`, the
    /// earlier name of `InvoiceIssuedByUser` (see templates/README.md).
    static let tableTwo: [(id: String, ru: String, en: String)] = [
        ("AgentPayment", "Зачисление средств.", "Funds Received"),
        ("AgentPaymentOverLimit", "Зачисление средств.", "Funds Received"),
        ("InvoiceIssuedByUser", "Вам выставлен счет.", "You are invoiced"),
        ("InvoiceIssuedToWallet", "Вам выставлен счет.", "You are invoiced"),
        ("InvoiceCanceled", "Выставленный счет отменен.", "Invoice is canceled"),
        ("InvoiceRejected", "Выставленный счет отклонен.", "Invoice is declined"),
        ("KycRequestStateIsAccepted", "Кошелек успешно идентифицирован.", "Wallet is identified"),
        ("KycRequestStateIsCanceled", "Запрос на идентификацию отклонен.", "Identification request declined"),
        ("ScheduledPaymentIsFail", "Запланированный платеж не выполнен.", "Recurrent payment is unsuccessful"),
        ("ScheduledPaymentIsSuccess", "Запланированный платеж успешно выполнен.", "Recurrent payment is successful"),
        ("InvoiceIssuedByMerch", "Вам выставлен счет.", "You are invoiced"),
        ("UserStateIsBlockOutput", "Приостановление расходных операций по кошельку.", "Debit operations suspended"),
        ("UserStateIsBlockInput", "Приостановление приходных операций по кошельку.", "Credit operations suspended"),
        ("UserStateIsBlockedPartnerProgram", "Приостановление расходных операций по кошельку.", "Debit operations suspended"),
        ("UserStateIsBlocked", "Приостановление операций по кошельку.", "Transfers suspended"),
        ("UserStateIsActive", "Аккаунт успешно активирован.", "Account is activated"),
        ("TransferIssuedUnlockCode", "Вам поступил перевод.", "You received a transfer"),
        ("TransferIssued", "Вам поступил перевод.", "You received a transfer"),
        ("InvoicePaid", "Ваш счет успешно оплачен.", "Invoice paid successfully"),
        ("InvoicePaidWithRefund", "Ваш счет успешно оплачен.", "Invoice paid successfully"),
    ]

    func event(_ id: String, params: [String] = ["v1", "v2", "v3"], type: EventType = .message) -> Event {
        Event(
            id: id, type: type, dateTime: SeedSamples.event.dateTime, filters: [EventFilter(name: .userId, value: "1")],
            params: params.enumerated().map { EventParameter(name: "n\($0.offset + 1)", value: $0.element) })
    }

    @Test func shippedTemplatesRenderEveryEventInBothCulturesAndPlatforms() throws {
        let catalog = try RepositoryFiles.shippedCatalog()
        #expect(catalog.problems.isEmpty)
        #expect(catalog.templates.count == Self.tableTwo.count * 4)
        for row in Self.tableTwo {
            for platform in Platform.allCases {
                let ru = try catalog.render(event(row.id), culture: "ru-RU", platform: platform)
                #expect(ru.title == "Wallet One")
                #expect(ru.body == row.ru, "\(row.id) \(platform)")
                #expect(ru.culture == "ru-RU")
                let en = try catalog.render(event(row.id), culture: "en-us", platform: platform)
                #expect(en.body == row.en, "\(row.id) \(platform)")
                #expect(en.culture == "en-US")
                #expect(!en.isSilent)
            }
        }
    }

    @Test func shippedMetadataFollowsTheDocumentedDecisions() throws {
        let catalog = try RepositoryFiles.shippedCatalog()
        for row in Self.tableTwo {
            let m = try #require(catalog.metadata(forEventId: row.id))
            let money = row.id.hasPrefix("AgentPayment") || row.id.hasPrefix("TransferIssued") || row.id.hasPrefix("InvoicePaid")
            #expect((m.sound == "default") == money, "\(row.id): sound only for incoming money")
            #expect(m.androidChannel == (money ? "money_in" : nil), "\(row.id): money-in on a channel of its own")
            #expect(!m.isSilent)
            #expect(m.tag != nil && m.targetScreen != nil && m.timeToLiveSeconds != nil)
            if money { #expect(m.isPrivate && m.priority == .high) }
        }
        #expect(catalog.metadata(forEventId: "InvoiceIssuedByUser")?.targetScreen == .invoicePayment)
        #expect(catalog.metadata(forEventId: "UserStateIsBlocked")?.targetScreen == .dashboard)
        #expect(catalog.metadata(forEventId: "KycRequestStateIsAccepted")?.targetScreen == .timeline, "crossed out in table 2")
        #expect(catalog.metadata(forEventId: "transferissued")?.tag == "transfers", "event ids are case-insensitive")
        // Every metadata entry has texts, and every text has metadata.
        let metadata = try EventMetadataFile.parse([UInt8](try Data(contentsOf: RepositoryFiles.templatesFolder.appendingPathComponent("events.json"))))
        #expect(Set(metadata.map(\.eventId)) == Set(Self.tableTwo.map(\.id)))
    }

    @Test func cultureFallback() throws {
        let m = EventMetadata(eventId: "E")
        let catalog = try TemplateCatalog(
            templates: [
                Template(eventId: "E", culture: "ru", platform: .ios, title: "T", body: "ru neutral", metadata: m),
                Template(eventId: "E", culture: "en-US", platform: .ios, title: "T", body: "en", metadata: m),
                Template(eventId: "E", culture: "de-DE", platform: .ios, title: "T", body: "de", metadata: m),
                Template(eventId: "F", culture: "de-DE", platform: .ios, title: "T", body: "only de", metadata: m),
            ], defaultCulture: "en-US")
        #expect(catalog.fallbackChain(for: "ru-RU") == ["ru-RU", "ru", "en-US"])
        #expect(catalog.fallbackChain(for: "en-US") == ["en-US", "en"])
        #expect(try catalog.render(event("E"), culture: "ru-RU", platform: .ios).body == "ru neutral")
        #expect(try catalog.render(event("E"), culture: "ru-RU", platform: .ios).culture == "ru")
        #expect(try catalog.render(event("E"), culture: "fr-FR", platform: .ios).body == "en")
        #expect(try catalog.render(event("E"), culture: "DE-de", platform: .ios).body == "de")
        #expect(try catalog.template(eventId: "e", culture: "de-de", platform: .ios).body == "de")
        do {
            _ = try catalog.render(event("F"), culture: "ru-RU", platform: .ios)
            Issue.record("rendered")
        } catch {
            #expect(error.code == .noTemplate)
            #expect(error.description == "noTemplate for event F (culture ru-RU, platform ios): no ios text in any of the cultures tried (ru-RU, ru, en-US)")
        }
        do {
            _ = try catalog.render(event("E"), culture: "ru-RU", platform: .android)
            Issue.record("rendered")
        } catch {
            #expect(error.code == .noTemplate)
        }
    }

    @Test func unknownEventIsNoTemplateNamingTheEvent() throws {
        let catalog = try RepositoryFiles.shippedCatalog()
        do {
            _ = try catalog.render(SeedSamples.event, culture: "ru-RU", platform: .ios)
            Issue.record("rendered")
        } catch {
            #expect(error.code == .noTemplate)
            #expect(error.eventId == "EVENT 006")
            #expect(error.description == "noTemplate for event EVENT 006 (culture ru-RU, platform ios): no template defines this event id")
        }
    }

    @Test func placeholdersSystemEventsAndBrokenTemplates() throws {
        let m = EventMetadata(eventId: "Balance")
        let catalog = try TemplateCatalog(
            templates: [
                Template(eventId: "Balance", culture: "ru-RU", platform: .ios, title: "Баланс {0}", body: "Баланс пользователя {0}: {1}", metadata: m),
                Template(eventId: "Broken", culture: "ru-RU", platform: .ios, title: "T", body: "oops {name}", metadata: m),
            ], defaultCulture: "ru-RU")
        let rendered = try catalog.render(event("Balance", params: ["119973638970", "10.00"], type: .system), culture: "ru-RU", platform: .ios)
        #expect(rendered.title == "Баланс 119973638970")
        #expect(rendered.body == "Баланс пользователя 119973638970: 10.00")
        #expect(rendered.isSilent, "System events are silent")
        #expect(catalog.problems.count == 1)
        #expect(catalog.problems.first?.code == .unknownPlaceholder)
        #expect(catalog.problems.first?.eventId == "Broken")
        #expect { try catalog.render(event("Broken"), culture: "ru-RU", platform: .ios) } throws: { ($0 as? TemplateError)?.code == .unknownPlaceholder }
        #expect { try catalog.render(event("Balance", params: ["1"]), culture: "ru-RU", platform: .ios) } throws: {
            let e = $0 as? TemplateError
            return e?.code == .missingParameter && e?.source == "body" && e?.eventId == "Balance"
        }
    }

    @Test func duplicateTemplatesAreRefused() {
        let t = Template(eventId: "E", culture: "ru-RU", platform: .ios, title: "T", body: "B", metadata: .defaults(for: "E"))
        var other = t
        other.eventId = "e"
        other.culture = "RU-ru"
        #expect { try TemplateCatalog(templates: [t, other], defaultCulture: "ru-RU") } throws: { ($0 as? TemplateError)?.code == .duplicateTemplate }
    }
}
