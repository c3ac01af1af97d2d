import Foundation
import HeraldCore
import HeraldPostgres
import HeraldStore
import HeraldTesting
import Testing

/// `herald deliveries show|list`, run as a support engineer would, against a fresh database.
@Suite("herald deliveries", .timeLimit(.minutes(2)))
struct DeliveriesCommandTests {
    @Test func showAndListTablesAndJSON() async throws {
        try await TestDatabase.with { _, database in
            let environment = ["HERALD_DATABASE_URL": database.url, "HERALD_LOG_LEVEL": "error"]
            #expect(try HeraldCLI.run(["migrate"], environment: environment).status == 0)
            var configuration = StoreConfiguration(database: database.configuration)
            configuration.maintenanceInterval = nil
            let store = try Store(configuration: configuration)
            let token = String(repeating: "ab", count: 32)
            try await store.devices.subscribe(DeviceRegistration(deviceId: "phone-1", platform: .ios, token: token, culture: "ru-RU", userId: "u1"))
            try await JournalSeed.record(
                store, deviceId: "phone-1", userId: "u1", messageKeys: ["transfer-1", "transfer-2"], state: { $0 == 1 ? .sent : .tokenDead })
            try await store.deadLetters.record(DeadLetter(messageKey: "broken-1", queue: "q", errorCode: "unknown_event", reason: "no template for event Nope"))
            await store.close()

            let show = try HeraldCLI.run(["deliveries", "show", "transfer-1"], environment: environment)
            #expect(show.status == 0, "\(show.stderr)")
            #expect(show.stdout.contains("Message transfer-1: sent"))
            #expect(show.stdout.contains("1 deliveries planned"))
            #expect(show.stdout.contains("u1\tphone-1\tabab…abab"))
            #expect(show.stdout.contains("\t1\tsent\t1\t"))
            #expect(!show.stdout.contains(token), "tokens are shortened")

            let dead = try HeraldCLI.run(["deliveries", "show", "transfer-2", "--json"], environment: environment)
            #expect(dead.status == 0)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(dead.stdout.utf8)) as? [String: Any])
            #expect(json["summary"] as? String == "not_sent")
            #expect((json["deliveries"] as? [[String: Any]])?.first?["state"] as? String == "token_dead")

            let letter = try HeraldCLI.run(["deliveries", "show", "broken-1"], environment: environment)
            #expect(letter.status == 0)
            #expect(letter.stdout.contains("dead lettered"))
            #expect(letter.stdout.contains("unknown_event: no template for event Nope"))

            let unknown = try HeraldCLI.run(["deliveries", "show", "never"], environment: environment)
            #expect(unknown.status == 3)
            #expect(unknown.stdout.contains("Message never: unknown"))

            let list = try HeraldCLI.run(["deliveries", "list", "--user", "u1", "--since", "1h"], environment: environment)
            #expect(list.status == 0, "\(list.stderr)")
            #expect(list.stdout.contains("transfer-2\tTransferIssued\tu1\tphone-1"))
            #expect(list.stdout.contains("2 deliveries to user u1"))
            let listed = try HeraldCLI.run(["deliveries", "list", "--user", "u1", "--json", "--limit", "1"], environment: environment)
            let page = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
            #expect(page["hasMore"] as? Bool == true)
            #expect(try HeraldCLI.run(["deliveries", "list", "--user", "u1", "--since", "soon"], environment: environment).status != 0)
        }
    }
}
