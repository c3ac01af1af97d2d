import Foundation
import HeraldCore
import HeraldDelivery
import HeraldHTTP
import HeraldSandbox
import Logging
import Synchronization

/// A wall clock tests move by hand; shared by senders and the sandbox so that token ages agree.
final class ManualClock: ProviderClock {
    private let current: Mutex<Date>

    init(_ start: Date = Date()) {
        current = Mutex(start)
    }

    func now() -> Date { current.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

/// A running sandbox with helpers to make senders pointed at it and deliveries built by
/// HeraldCore's payload builder.
struct DeliveryFixture: Sendable {
    let sandbox: RunningSandbox
    let directory: URL

    static let topic = "com.example.herald"
    static let otherTopic = "com.example.second"

    static func with<T: Sendable>(clock: ManualClock? = nil, _ body: (DeliveryFixture) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-delivery-tests-\(UUID().uuidString)")
        let sandboxClock: @Sendable () -> Date
        if let clock {
            sandboxClock = { clock.now() }
        } else {
            sandboxClock = { Date() }
        }
        var logger = Logger(label: "herald.sandbox")
        logger.logLevel = ProcessInfo.processInfo.environment["HERALD_TEST_SANDBOX_LOG"] == "debug" ? .debug : .info
        let sandbox = try await Sandbox.start(SandboxConfiguration(directory: directory, topics: [topic, otherTopic], clock: sandboxClock), logger: logger)
        let fixture = DeliveryFixture(sandbox: sandbox, directory: directory)
        do {
            let result = try await body(fixture)
            await fixture.shutdown()
            return result
        } catch {
            await fixture.shutdown()
            throw error
        }
    }

    func shutdown() async {
        await sandbox.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    var http: HTTPClientConfiguration {
        HTTPClientConfiguration(requestTimeout: .seconds(30), tls: .init(caFile: sandbox.files.caCertificate.path))
    }

    var apnsConfiguration: APNsConfiguration {
        .token(
            topics: [Self.topic, Self.otherTopic], keyFile: sandbox.files.apnsKey.path, keyID: sandbox.credentials.keyID,
            teamID: sandbox.credentials.teamID, environment: .sandbox, baseURL: sandbox.apnsURL, http: http
        )
    }

    var fcmConfiguration: FCMConfiguration {
        .serviceAccounts([sandbox.files.serviceAccount.path], baseURL: sandbox.fcmURL, http: http)
    }

    func apnsSender(clock: (any ProviderClock)? = nil, edit: (inout APNsConfiguration) -> Void = { _ in }) throws -> APNsSender {
        var configuration = apnsConfiguration
        edit(&configuration)
        return try APNsSender(configuration: configuration, clock: clock ?? SystemProviderClock())
    }

    func fcmSender(clock: (any ProviderClock)? = nil, edit: (inout FCMConfiguration) -> Void = { _ in }) throws -> FCMSender {
        var configuration = fcmConfiguration
        edit(&configuration)
        return try FCMSender(configuration: configuration, clock: clock ?? SystemProviderClock())
    }

    // MARK: deliveries

    static let event = Event(
        id: "TransferIssued", type: .message, dateTime: EventTimestamp(date: Date(timeIntervalSince1970: 1_398_868_367)),
        params: [EventParameter(name: "Amount", value: "100.00"), EventParameter(name: "Currency", value: "RUB")]
    )

    static func apnsToken(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }

    static func fcmToken(_ n: Int) -> String { "fcm-token:device-\(n)" }

    /// A delivery of the seed's TransferIssued event to device `n`, built by HeraldCore.
    static func delivery(
        _ n: Int, platform: Platform, profile: PayloadProfile = .modern, token: String? = nil, app: String? = nil, silent: Bool = false,
        body: String = "Вам поступил перевод 100.00 RUB"
    ) throws -> PushDelivery {
        let token = token ?? (platform == .ios ? apnsToken(n) : fcmToken(n))
        let target = PushTarget(platform: platform, token: token, userId: "user-\(n)", app: app)
        let metadata = EventMetadata(eventId: event.id, tag: "transfers", priority: .high, sound: "default", isSilent: silent, timeToLiveSeconds: 3600)
        let rendered = RenderedNotification(
            eventId: event.id, culture: "ru-RU", platform: platform, title: "Wallet One", body: body, metadata: metadata, isSilent: silent)
        let key = DeliveryKey(messageKey: "message-\(n)", deviceId: "device-\(n)", userId: "user-\(n)")
        let payload = try PayloadBuilder(profile: profile).build(rendered, event: event, target: target, deliveryKey: key, now: Date(), position: Int64(n))
        return PushDelivery(
            deliveryKey: key, deviceId: "device-\(n)", userId: "user-\(n)", eventId: event.id, position: Int64(n), target: target, payload: payload)
    }
}
