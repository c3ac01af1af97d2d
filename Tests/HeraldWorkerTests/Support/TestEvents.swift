import Foundation
import HeraldAMQP
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import HeraldWorker
import Testing

/// Event bodies and devices for the worker tests.
enum TestEvents {
    /// Seed 000's XML sample (EventId `EVENT 006`, three UserIds, ru-RU, zones w1/yessplay,
    /// branch 101, parameters v1 v2 v3).
    static let seedSample = SeedSampleDocuments.xml

    /// Templates for the seed sample's event id, using its three parameters.
    static func seedTemplates(defaultCulture: String = "ru-RU") -> [Template] {
        let metadata = EventMetadata(eventId: "EVENT 006", tag: "transfers", priority: .high, sound: "default")
        return [
            Template(eventId: "EVENT 006", culture: "ru-RU", platform: .ios, title: "Wallet One", body: "Перевод {0}: {1} из {2}", metadata: metadata),
            Template(eventId: "EVENT 006", culture: "ru-RU", platform: .android, title: "Wallet One", body: "Перевод {0}: {1} из {2}", metadata: metadata),
            Template(eventId: "EVENT 006", culture: "en-US", platform: .ios, title: "Wallet One", body: "Transfer {0}: {1} of {2}", metadata: metadata),
            Template(eventId: "EVENT 006", culture: "en-US", platform: .android, title: "Wallet One", body: "Transfer {0}: {1} of {2}", metadata: metadata),
        ]
    }

    /// An event for `users` with `parameters`, unique by `sequence` (its timestamp's fraction).
    static func xml(
        eventId: String = "TransferIssued", users: [String], parameters: [String] = ["100.00", "RUB"], sequence: Int, type: String = "Message"
    ) -> Data {
        let filters = users.map { #"<Filter name="UserId" value="\#($0)" />"# }.joined()
        let params = parameters.enumerated().map { #"<EventParam name="p\#($0.offset)" value="\#($0.element)" />"# }.joined()
        let fraction = String(format: "%07d", sequence % 10_000_000)
        let seconds = String(format: "%02d", sequence / 10_000_000 % 60)
        return Data(
            """
            <PushNotification><EventId>\(eventId)</EventId><EventType>\(type)</EventType>\
            <EventDateTime>2015-04-30T17:32:\(seconds).\(fraction)+03:00</EventDateTime>\
            <EventFilters>\(filters)</EventFilters><EventParams>\(params)</EventParams></PushNotification>
            """.utf8)
    }

    /// One event for each of `users` in turn, each unique by its place (sequence 1, 2, …).
    static func onePerUser(_ users: [String]) -> [Data] {
        users.enumerated().map { xml(users: [$0.element], sequence: $0.offset + 1) }
    }

    /// A 64-hex-digit APNs token for `n` (the sandbox checks the format).
    static func apnsToken(_ n: Int) -> String { String(format: "%064x", n) }

    /// Each user with an iPhone (`iphone-<n>`, an APNs token for `n`) and an Android phone
    /// (`pixel-<n>`).
    static func phonePairs(for users: [String]) -> [DeviceRegistration] {
        users.enumerated().flatMap { n, user in
            [device("iphone-\(n)", user: user, platform: .ios, token: apnsToken(n)), device("pixel-\(n)", user: user, platform: .android)]
        }
    }

    static func device(
        _ id: String, user: String, platform: Platform = .ios, token: String? = nil, culture: String = "ru-RU", zone: String? = nil, branch: String? = nil
    ) -> DeviceRegistration {
        DeviceRegistration(deviceId: id, platform: platform, token: token ?? "token-\(id)", culture: culture, userId: user, zoneId: zone, branchId: branch)
    }
}
