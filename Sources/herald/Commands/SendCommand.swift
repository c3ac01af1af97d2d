import ArgumentParser
import Foundation
import HeraldCore
import HeraldDelivery
import HeraldStore
import Logging

/// `herald send`: one test push, now, through the configured sender, to a stored device, to
/// every live device of a user, or to a raw token; from a template (event id, parameters,
/// culture) or from a payload file. Prints the provider's answer for each push. What an
/// operator reaches for to check credentials or a device ("does this token still work?").
///
/// Nothing is recorded: no journal row, no notification-log entry, no token marked dead.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send one push to a device, a user or a token and print the provider's answer.",
        discussion: """
            Target: --device ID (a stored device), --user ID (each of the user's devices with a \
            live token) or --token TOKEN --platform ios|android (no database needed). Content: \
            --event ID with --param VALUE (repeat, in order) and --culture, rendered with the \
            templates in the database (or --templates DIR) exactly as the worker would; or \
            --payload FILE ('-': standard input) with the JSON as is (APNs: the notification, \
            e.g. {"aps":{"alert":"hi"}}; FCM: the HTTP v1 message, without its token). The \
            sender is worker.sender (required: --sender, HERALD_WORKER_SENDER), with its usual \
            credential keys. Nothing is recorded. Exit status 0 when every push was accepted, \
            1 when one was not, 78 for a configuration problem.
            """
    )

    @Option(help: "A stored device id: the push goes to its token.")
    var device: String?

    @Option(help: "A user id: one push to each of the user's devices with a live token.")
    var user: String?

    @Option(help: "A raw APNs device token or FCM registration token (with --platform).")
    var token: String?

    @Option(help: "Platform of --token: ios or android.")
    var platform: String?

    @Option(help: "App (APNs topic or FCM project alias) of --device or --token (default: the default app).")
    var app: String?

    @Option(help: "Template event id, e.g. TransferIssued.")
    var event: String?

    @Option(name: .customLong("param"), help: "Template parameter {0}, {1}…, in order (repeat the flag).")
    var params: [String] = []

    @Option(help: "Culture of the template (default: the device's, else templates.default_culture).")
    var culture: String?

    @Option(help: "Read templates from this folder instead of the database.")
    var templates: String?

    @Option(help: "A JSON payload file to send as is ('-' reads standard input).")
    var payload: String?

    @Option(help: "Where the push goes: providers, log or null (worker.sender, HERALD_WORKER_SENDER; required).")
    var sender: String?

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard [device, user, token].compactMap({ $0 }).count == 1 else { throw ValidationError("give one of --device, --user or --token") }
        if token != nil {
            guard let platform, Platform(name: platform) != nil else { throw ValidationError("--token needs --platform ios or android") }
        }
        guard (event == nil) != (payload == nil) else { throw ValidationError("give one of --event or --payload") }
        if payload != nil, !params.isEmpty || templates != nil {
            throw ValidationError("--param and --templates go with --event, not --payload")
        }
    }

    func run() async throws {
        let (settings, logger) = try global.settings(database, logger: "herald.send") { $0.set(.workerSender, flag: sender) }
        let needsStore = token == nil || (event != nil && templates == nil)
        let content: PushContent
        do {
            content = try PushContent.read(event: event, params: params, payloadPath: payload)
        } catch {
            Console.error("herald send: \(error)")
            throw ExitCode.failure
        }
        let pushSender: any PushSender
        do {
            pushSender = try SenderSettings.makeSender(settings: settings, logger: logger)
        } catch {
            Console.error("herald send: \(error)")
            throw ExitCode(78)
        }
        var allSent = true
        do {
            let (recipients, catalog) = try await resolve(settings: settings, logger: logger, needsStore: needsStore)
            guard !recipients.isEmpty else { throw SendError("user \(user ?? "") has no device with a live token") }
            let builder = PayloadBuilder(
                profile: try settings.choice(.workerPayloadProfile, default: PayloadProfile.legacy),
                legacyBadge: try settings.bool(.workerLegacyBadge, default: false))
            for recipient in recipients {
                let delivery = try content.delivery(
                    to: recipient, catalog: catalog, culture: culture ?? recipient.culture ?? RuntimeSettings.defaultCulture(settings), builder: builder)
                let outcome = await pushSender.send(delivery)
                allSent = allSent && outcome == .sent
                Console.out(Self.answerLine(delivery: delivery, outcome: outcome))
            }
        } catch {
            await pushSender.shutdown()
            Console.error("herald send: \(error)")
            throw error is ConfigurationError ? ExitCode(78) : ExitCode.failure
        }
        await pushSender.shutdown()
        if !allSent { throw ExitCode.failure }
    }

    /// The devices to send to and, for `--event`, the templates.
    private func resolve(settings: Settings, logger: Logger, needsStore: Bool) async throws -> ([SendRecipient], TemplateCatalog?) {
        let folderCatalog = try templates.map { try TemplateFolder.catalog($0, settings: settings) }
        guard needsStore else {
            let target = PushTarget(platform: Platform(name: platform ?? "")!, token: token ?? "", userId: "0", app: app)
            return ([SendRecipient(deviceId: "herald-send", culture: nil, target: target)], folderCatalog)
        }
        return try await RuntimeSettings.withStore(settings, logger: logger) { store in
            var catalog = folderCatalog
            if event != nil, catalog == nil { catalog = try await store.templates.catalog(defaultCulture: RuntimeSettings.defaultCulture(settings)) }
            if let token {
                let target = PushTarget(platform: Platform(name: platform ?? "")!, token: token, userId: "0", app: app)
                return ([SendRecipient(deviceId: "herald-send", culture: nil, target: target)], catalog)
            }
            if let device {
                guard let stored = try await store.devices.device(id: device, app: app) else { throw SendError("no device \(device)") }
                guard let recipient = SendRecipient(stored, userId: stored.users.first?.userId ?? "0") else {
                    throw SendError("device \(device) has no live token (\(stored.tokenState))")
                }
                return ([recipient], catalog)
            }
            let devices = try await store.devices.list(userId: user, limit: 1_000)
            return (devices.compactMap { SendRecipient($0, userId: user ?? "0") }, catalog)
        }
    }

    /// `<device> <platform> [app]: <outcome>`, and the request's apns-id for APNs: the answer an
    /// operator compares with the provider's own logs.
    static func answerLine(delivery: PushDelivery, outcome: DeliveryOutcome) -> String {
        var line = "\(delivery.deviceId) \(delivery.platform)"
        if let app = delivery.target.app { line += " app \(app)" }
        line += " token \(LogKey.shortToken(delivery.target.token)): \(outcome)"
        if delivery.platform == .ios { line += " (apns-id \(delivery.deliveryKey.apnsID))" }
        return line
    }
}

/// One device `herald send` sends to.
struct SendRecipient: Sendable {
    var deviceId: String
    var culture: String?
    var target: PushTarget

    init(deviceId: String, culture: String?, target: PushTarget) {
        self.deviceId = deviceId
        self.culture = culture
        self.target = target
    }

    /// A stored device with a live token, addressed to `userId`; nil without one.
    init?(_ device: Device, userId: String) {
        guard let token = device.token, device.tokenState == .active else { return nil }
        self.init(
            deviceId: device.deviceId, culture: device.culture, target: PushTarget(platform: device.platform, token: token, userId: userId, app: device.app))
    }
}

/// A problem `herald send` reports with exit status 1.
struct SendError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
