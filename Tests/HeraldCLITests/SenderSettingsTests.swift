import Foundation
import HeraldCore
import HeraldDelivery
import HeraldHTTP
import HeraldSandbox
import Logging
import Testing

@testable import herald

@Suite struct SenderSettingsTests {
    static let logger = Logger(label: "test")

    @Test func logAndNullSenders() throws {
        let log = try SenderSettings.makeSender(settings: Settings(file: [.workerSender: "log"], environment: [:]), logger: Self.logger)
        #expect(log is LogSender)
        let unset = #expect(throws: ConfigurationError.self) {
            try SenderSettings.makeSender(settings: Settings(file: [:], environment: ["HERALD_WORKER_SENDER": ""]), logger: Self.logger)
        }
        #expect(unset?.key == "worker.sender" && unset?.code == .missing)
        for name in ["--sender", "HERALD_WORKER_SENDER", "providers", "log", "null"] {
            #expect(unset?.description.contains(name) == true, "\(String(describing: unset)) lacks \(name)")
        }
        // herald api's resend route takes the log sender when the key is unset.
        #expect(try SenderSettings.makeSender(settings: Settings(file: [:], environment: [:]), logger: Self.logger, unset: .log) is LogSender)
        let null = try SenderSettings.makeSender(settings: Settings(file: [.workerSender: "null"], environment: [:]), logger: Self.logger)
        #expect(null is NullSender)
        let bad = #expect(throws: ConfigurationError.self) {
            try SenderSettings.makeSender(settings: Settings(file: [.workerSender: "carrier-pigeon"], environment: [:]), logger: Self.logger)
        }
        #expect(bad?.key == "worker.sender")
        let none = #expect(throws: ConfigurationError.self) {
            try SenderSettings.makeSender(settings: Settings(file: [.workerSender: "providers"], environment: [:]), logger: Self.logger)
        }
        #expect(none?.description.contains("no provider is configured") == true)
    }

    /// The sandbox's herald.yaml yields working APNs and FCM senders.
    @Test func providersFromTheSandboxConfigurationDeliver() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-sandbox-\(UUID().uuidString)")
        let sandbox = try await Sandbox.start(SandboxConfiguration(directory: directory))
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let settings = Settings(file: try ConfigurationFile.load(sandbox.files.configuration.path), environment: [:])
            let sender = try #require(try SenderSettings.makeSender(settings: settings, logger: Self.logger) as? RoutingSender)
            #expect(sender.ios is APNsSender)
            #expect(sender.android is FCMSender)
            for platform in Platform.allCases {
                let token = platform == .ios ? String(repeating: "0a", count: 32) : "fcm:token"
                let target = PushTarget(platform: platform, token: token, userId: "1")
                let key = DeliveryKey(messageKey: "m", deviceId: "d", userId: "1")
                let metadata = EventMetadata(eventId: "TransferIssued")
                let rendered = RenderedNotification(
                    eventId: "TransferIssued", culture: "ru-RU", platform: platform, title: "t", body: "b", metadata: metadata, isSilent: false)
                let event = Event(id: "TransferIssued", type: .message, dateTime: EventTimestamp(date: Date()))
                let payload = try PayloadBuilder(profile: .legacy).build(rendered, event: event, target: target, deliveryKey: key, now: Date())
                let delivery = PushDelivery(
                    deliveryKey: key, deviceId: "d", userId: "1", eventId: "TransferIssued", position: 1, target: target, payload: payload)
                #expect(await sender.send(delivery) == .sent)
            }
            await sender.shutdown()
            #expect(sandbox.pushes.count == 2)
        } catch {
            await sandbox.shutdown()
            throw error
        }
        await sandbox.shutdown()
    }

    @Test func aWrongKeyStopsTheWorkerNamingKeyFileAndProblem() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let wrongKey = folder.appendingPathComponent("AuthKey.p8").path
        try Data(try SandboxCredentials.generate(projectID: "p").serviceAccountKeyPEM.utf8).write(to: URL(fileURLWithPath: wrongKey))
        let settings = Settings(
            file: [.workerSender: "providers", .apnsTopic: "com.example.herald", .apnsKeyPath: wrongKey, .apnsKeyID: "ABCDE12345", .apnsTeamID: "TEAM123456"],
            environment: [:]
        )
        let error = #expect(throws: ConfigurationError.self) { try SenderSettings.makeSender(settings: settings, logger: Self.logger) }
        #expect(error?.key == "apns.key_path")
        #expect(error?.description.contains(wrongKey) == true)
        #expect(error?.description.contains("not a P-256") == true)

        let teamSettings = Settings(
            file: [.workerSender: "providers", .apnsTopic: "com.example.herald", .apnsKeyPath: wrongKey, .apnsKeyID: "ABCDE12345"],
            environment: ["HERALD_APNS_TEAM_ID": "team"]
        )
        let teamError = #expect(throws: ConfigurationError.self) { try SenderSettings.makeSender(settings: teamSettings, logger: Self.logger) }
        #expect(teamError?.key == "apns.team_id")
        #expect(teamError?.source == "HERALD_APNS_TEAM_ID")
        #expect(teamError?.description.contains("not a 10-character Apple identifier") == true)

        let truncated = folder.appendingPathComponent("service-account.json").path
        try Data(#"{"type":"service_account","project_id":"p","private_key":"-----BEGIN PRI"#.utf8).write(to: URL(fileURLWithPath: truncated))
        let fcmSettings = Settings(file: [.workerSender: "providers", .fcmServiceAccountPath: truncated], environment: [:])
        let fcmError = #expect(throws: ConfigurationError.self) { try SenderSettings.makeSender(settings: fcmSettings, logger: Self.logger) }
        #expect(fcmError?.key == "fcm.service_account_path")
        #expect(fcmError?.description.contains(truncated) == true)
        #expect(fcmError?.description.contains("not valid JSON") == true)
    }

    @Test func certificatesAndProxyMapToTheConfiguration() throws {
        let settings = Settings(
            file: [
                .apnsTopic: "com.example.a,com.example.b", .apnsCertPath: "/etc/herald/a.p12,/etc/herald/b.pem", .apnsCertPassword: "secret",
                .apnsEnvironment: "sandbox", .proxyURL: "10.0.0.1:3128", .proxyUser: "user1", .proxyPassword: "P@ssw0rd",
            ],
            environment: [:]
        )
        let apns = try #require(try SenderSettings.apnsConfiguration(settings: settings))
        #expect(apns.apps.map(\.topic) == ["com.example.a", "com.example.b"])
        #expect(apns.apps[0].certificate?.file == "/etc/herald/a.p12")
        #expect(apns.apps[1].certificate?.file == "/etc/herald/b.pem")
        #expect(apns.tokenKey == nil)
        #expect(apns.environment == .sandbox)
        #expect(apns.http.proxy?.url == "http://10.0.0.1:3128")
        #expect(apns.http.proxy?.user == "user1")
        #expect(apns.http.proxy?.password == "P@ssw0rd")
        #expect(try SenderSettings.fcmConfiguration(settings: settings) == nil)

        let mismatched = Settings(file: [.apnsTopic: "a,b,c", .apnsCertPath: "x.p12,y.p12"], environment: [:])
        #expect(throws: ConfigurationError.self) { try SenderSettings.apnsConfiguration(settings: mismatched) }
        let noTopic = Settings(file: [.apnsKeyPath: "k.p8"], environment: [:])
        #expect(throws: ConfigurationError.self) { try SenderSettings.apnsConfiguration(settings: noTopic) }
    }
}
