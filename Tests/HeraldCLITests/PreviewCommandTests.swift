import Foundation
import HeraldTesting
import Testing

/// `herald preview`, run as a separate process the way a producer would run it.
@Suite struct PreviewCommandTests {
    static let seedXML = SeedSampleDocuments.xml

    static let templates = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("templates").path

    /// Writes `files` into a fresh temporary folder, runs `body` with their paths, removes it.
    func withFiles(_ files: [String: String], _ body: ([String: String]) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-preview-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var paths: [String: String] = [:]
        for (name, text) in files {
            let url = folder.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            paths[name] = url.path
        }
        try body(paths)
    }

    @Test func tableTwoEventPrintsRussianTextAndParametersInOrder() throws {
        try withFiles(["transfer.xml": Self.seedXML.replacingOccurrences(of: "EVENT 006", with: "TransferIssued")]) { paths in
            let result = try HeraldCLI.run(["preview", paths["transfer.xml"]!, "--templates", Self.templates], timeout: .seconds(60))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("EventId:       TransferIssued"))
            #expect(result.stdout.contains("\"alert\": \"Вам поступил перевод.\""), "\(result.stdout)")
            #expect(result.stdout.contains("\"acme_eid\": \"TransferIssued\""))
            #expect(result.stdout.contains("\"acme_userid\": \"119973638970\""))
            let v1 = try #require(result.stdout.range(of: "\"value\": \"v1\""))
            let v2 = try #require(result.stdout.range(of: "\"value\": \"v2\""))
            let v3 = try #require(result.stdout.range(of: "\"value\": \"v3\""))
            #expect(v1.lowerBound < v2.lowerBound && v2.lowerBound < v3.lowerBound)
            #expect(result.stdout.contains("apns-push-type: alert, apns-priority: 10"))
        }
    }

    /// Issue 48's check: the money-in events in the default (legacy) profile have `aps.sound`
    /// on iOS, the screen on both platforms, the `money_in` channel on Android;
    /// `worker.legacy_extras: false` gives the seed's keys only.
    @Test func moneyInEventsCarrySoundScreenAndChannelInTheDefaultProfile() throws {
        let events = ["AgentPayment", "AgentPaymentOverLimit", "TransferIssued", "TransferIssuedUnlockCode", "InvoicePaid", "InvoicePaidWithRefund"]
        try withFiles(Dictionary(uniqueKeysWithValues: events.map { ("\($0).xml", Self.seedXML.replacingOccurrences(of: "EVENT 006", with: $0)) })) {
            paths in
            let files = events.map { paths["\($0).xml"]! }
            let ios = try HeraldCLI.run(["preview"] + files + ["--templates", Self.templates], timeout: .seconds(60))
            #expect(ios.status == 0, "\(ios.stderr)")
            let android = try HeraldCLI.run(["preview"] + files + ["--templates", Self.templates, "--platform", "android"], timeout: .seconds(60))
            #expect(android.status == 0, "\(android.stderr)")
            func count(_ text: String, _ part: String) -> Int { text.components(separatedBy: part).count - 1 }
            #expect(count(ios.stdout, "profile legacy") == 6)
            #expect(count(ios.stdout, "\"sound\": \"default\"") == 6, "\(ios.stdout)")
            #expect(count(ios.stdout, "\"acme_screen\": \"timeline\"") == 6)
            #expect(count(android.stdout, "\"screen\": \"timeline\"") == 6, "\(android.stdout)")
            #expect(count(android.stdout, "\"channel\": \"money_in\"") == 6)
            let exact = try HeraldCLI.run(
                ["preview"] + files + ["--templates", Self.templates], environment: ["HERALD_WORKER_LEGACY_EXTRAS": "false"], timeout: .seconds(60))
            #expect(exact.status == 0, "\(exact.stderr)")
            #expect(!exact.stdout.contains("\"sound\"") && !exact.stdout.contains("acme_screen"), "\(exact.stdout)")
        }
    }

    @Test func otherCulturesPlatformsProfilesAndJSON() throws {
        let json = """
            {"EventId": "UserStateIsBlocked", "EventType": "Message", "EventDateTime": "2014-04-30T17:32:47.4123771+03:00",
             "EventFilters": [{"Name": "UserId", "Value": "42"}], "EventParams": [{"Name": "a", "Value": "x"}]}
            """
        try withFiles(["blocked.json": json]) { paths in
            let result = try HeraldCLI.run(
                [
                    "preview", paths["blocked.json"]!, "--templates", Self.templates, "--culture", "en-US", "--platform", "android", "--profile", "modern",
                    "--token", "tok",
                ],
                timeout: .seconds(60))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("format:        json"))
            #expect(result.stdout.contains("\"body\": \"Transfers suspended\""), "\(result.stdout)")
            #expect(result.stdout.contains("\"token\": \"tok\""))
            #expect(result.stdout.contains("\"userid\": \"42\""))
        }
    }

    @Test func sampleAsItStandsHasNoTemplate() throws {
        try withFiles(["sample.xml": Self.seedXML]) { paths in
            let result = try HeraldCLI.run(["preview", paths["sample.xml"]!, "--templates", Self.templates], timeout: .seconds(60))
            #expect(result.status != 0)
            #expect(result.stderr.contains("noTemplate for event EVENT 006"), "\(result.stderr)")
            #expect(result.stdout.contains("EventId:       EVENT 006"), "the decoded event is still shown")
        }
    }

    @Test func brokenFileNamesTheField() throws {
        let broken = Self.seedXML.replacingOccurrences(of: "+03:00</EventDateTime>", with: "+03:00/EventDateTime>")
        let badType = Self.seedXML.replacingOccurrences(of: ">Message<", with: ">Sms<")
        try withFiles(["broken.xml": broken, "badtype.xml": badType, "good.xml": Self.seedXML.replacingOccurrences(of: "EVENT 006", with: "InvoicePaid")]) {
            paths in
            let result = try HeraldCLI.run(
                ["preview", paths["broken.xml"]!, paths["good.xml"]!, paths["badtype.xml"]!, "--templates", Self.templates], timeout: .seconds(60))
            #expect(result.status != 0)
            #expect(result.stderr.contains("malformedDocument at EventDateTime"), "\(result.stderr)")
            #expect(result.stderr.contains("invalidValue at EventType: must be one of Message, News, Notification, System"), "\(result.stderr)")
            #expect(result.stdout.contains("Ваш счет успешно оплачен."), "good files in between are still previewed")
        }
    }

    /// Seed 000's own `.resx` (a body per event, no title) previews; the modern payload has the
    /// body alone.
    @Test func seedFormatTemplatesWithoutTitles() throws {
        let event = Self.seedXML.replacingOccurrences(of: "EVENT 006", with: "balance")
        try withFiles(["AppleMessages.ru-RU.resx": SeedSampleDocuments.resx, "balance.xml": event]) { paths in
            let folder = URL(fileURLWithPath: paths["balance.xml"]!).deletingLastPathComponent().path
            let legacy = try HeraldCLI.run(["preview", paths["balance.xml"]!, "--templates", folder], timeout: .seconds(60))
            #expect(legacy.status == 0, "\(legacy.stderr)")
            #expect(legacy.stdout.contains("\"alert\": \"Баланс пользователя v1: v2\""), "\(legacy.stdout)")
            let modern = try HeraldCLI.run(["preview", paths["balance.xml"]!, "--templates", folder, "--profile", "modern"], timeout: .seconds(60))
            #expect(modern.status == 0, "\(modern.stderr)")
            #expect(modern.stdout.contains("\"body\": \"Баланс пользователя v1: v2\""), "\(modern.stdout)")
            #expect(!modern.stdout.contains("\"title\""), "\(modern.stdout)")
        }
    }

    /// The default culture comes from the configuration like in every other command: the file
    /// (`--config`), then `HERALD_TEMPLATES_DEFAULT_CULTURE`, then `--default-culture`.
    @Test func defaultCultureFromTheConfiguration() throws {
        let json = """
            {"EventId": "UserStateIsBlocked", "EventType": "Message", "EventDateTime": "2014-04-30T17:32:47.4123771+03:00",
             "EventFilters": [{"Name": "UserId", "Value": "42"}], "EventParams": []}
            """
        try withFiles(["blocked.json": json, "herald.yaml": "templates:\n  default_culture: en-US\n"]) { paths in
            let arguments = ["preview", paths["blocked.json"]!, "--templates", Self.templates]
            let russian = try HeraldCLI.run(arguments, environment: ["HERALD_CONFIG": ""], timeout: .seconds(60))
            #expect(russian.stdout.contains("Приостановление операций по кошельку."), "\(russian.stdout)\(russian.stderr)")
            let file = try HeraldCLI.run(arguments + ["--config", paths["herald.yaml"]!], timeout: .seconds(60))
            #expect(file.status == 0, "\(file.stderr)")
            #expect(file.stdout.contains("Transfers suspended"), "\(file.stdout)")
            let environment = try HeraldCLI.run(arguments, environment: ["HERALD_TEMPLATES_DEFAULT_CULTURE": "en-US"], timeout: .seconds(60))
            #expect(environment.stdout.contains("Transfers suspended"), "\(environment.stdout)\(environment.stderr)")
            let flag = try HeraldCLI.run(
                arguments + ["--default-culture", "ru-RU"], environment: ["HERALD_TEMPLATES_DEFAULT_CULTURE": "en-US"], timeout: .seconds(60))
            #expect(flag.stdout.contains("Приостановление операций по кошельку."), "the flag wins: \(flag.stdout)\(flag.stderr)")
        }
    }

    @Test func badOptionsAndMissingTemplates() throws {
        try withFiles(["a.xml": Self.seedXML]) { paths in
            let platform = try HeraldCLI.run(["preview", paths["a.xml"]!, "--platform", "windows"], timeout: .seconds(60))
            #expect(platform.status != 0)
            #expect(platform.stderr.contains("--platform must be ios or android"))
            let missing = try HeraldCLI.run(["preview", paths["a.xml"]!, "--templates", "/nonexistent-herald-templates"], timeout: .seconds(60))
            #expect(missing.status != 0)
            #expect(missing.stderr.contains("templates folder"))
            let absent = try HeraldCLI.run(["preview", "/nonexistent-herald-event.xml", "--templates", Self.templates], timeout: .seconds(60))
            #expect(absent.status != 0)
            #expect(absent.stderr.contains("cannot read"))
        }
    }
}
