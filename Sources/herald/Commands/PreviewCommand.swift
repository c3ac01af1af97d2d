import ArgumentParser
import Foundation
import HeraldCore

/// `herald preview`: a dry run for producers and operators, with no broker and no database.
/// Decodes event files exactly as the worker would, renders them with the templates of a
/// directory, and prints the payload a device of the given culture and platform would get.
/// Reads the configuration like every command (`--config`, `HERALD_*`): the default culture
/// (`templates.default_culture`) and the payload shapes (`worker.payload_profile`,
/// `worker.legacy_extras`), so that it prints what the worker would send.
struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Decode event files (XML or JSON) and print the payload a device would receive.",
        discussion: """
            Nothing is sent and nothing is stored. Each file is decoded like a message from the \
            bus; the decoded event is printed, then the exact payload JSON (sorted keys) for a \
            device of the chosen culture, platform and payload profile. A file that cannot be \
            decoded or rendered prints the typed error (field and reason); the exit status is \
            then non-zero.
            """
    )

    @Argument(help: "Event files: seed 000 XML (<PushNotification>) or JSON.")
    var eventFiles: [String]

    @Option(help: "Folder with *.resx templates and events.json.")
    var templates: String = "templates"

    @Option(help: "Culture of the device (default: the event's CultureId filter, else the default culture).")
    var culture: String?

    @Option(help: "Last step of culture fallback (templates.default_culture, HERALD_TEMPLATES_DEFAULT_CULTURE; default ru-RU).")
    var defaultCulture: String?

    @Option(help: "Platform of the device: ios or android.")
    var platform: String = "ios"

    @Option(help: "Payload profile: legacy (seed 000 shapes) or modern (worker.payload_profile, HERALD_WORKER_PAYLOAD_PROFILE; default legacy).")
    var profile: String?

    @Option(help: "User the payload is addressed to (default: the event's first UserId, or 0 for a broadcast).")
    var user: String?

    @Option(help: "Device token written into FCM messages.")
    var token: String = "PREVIEW-DEVICE-TOKEN"

    @OptionGroup var global: GlobalOptions

    mutating func validate() throws {
        guard Platform(name: platform) != nil else { throw ValidationError("--platform must be ios or android") }
        if let profile, PayloadProfile(rawValue: profile.lowercased()) == nil { throw ValidationError("--profile must be legacy or modern") }
    }

    func run() throws {
        let platform = Platform(name: platform)!
        var settings = try global.settings()
        settings.set(.templatesDefaultCulture, flag: defaultCulture)
        settings.set(.workerPayloadProfile, flag: profile)
        let builder = try RuntimeSettings.payloadBuilder(settings)
        let catalog: TemplateCatalog
        do {
            catalog = try TemplateFolder.catalog(templates, settings: settings)
        } catch {
            printError("error: \(templates): \(error)")
            throw ExitCode(2)
        }
        for problem in catalog.problems { printError("warning: \(problem)") }

        var failures = 0
        for (index, path) in eventFiles.enumerated() {
            if index > 0 { print("") }
            do {
                try preview(path, catalog: catalog, platform: platform, builder: builder)
            } catch {
                failures += 1
                printError("error: \(path): \(error)")
            }
        }
        if failures > 0 { throw ExitCode.failure }
    }

    private func preview(_ path: String, catalog: TemplateCatalog, platform: Platform, builder: PayloadBuilder) throws {
        let bytes = try readFile(path)
        print("== \(path)")
        let decoded = try EventDecoder().decode(bytes)
        let event = decoded.event
        print("format:        \(decoded.format)")
        print("EventId:       \(event.id)")
        print("EventType:     \(event.type.rawValue)")
        print("EventDateTime: \(event.dateTime)")
        print("EventFilters:  \(event.filters.isEmpty ? "(none)" : event.filters.map { "\($0.name)=\($0.value)" }.joined(separator: ", "))")
        print(
            "EventParams:   \(event.params.isEmpty ? "(none)" : event.params.enumerated().map { "{\($0.offset)} \($0.element.name)=\($0.element.value)" }.joined(separator: ", "))"
        )
        for note in decoded.notes { print("note:          \(note)") }

        let culture = self.culture ?? event.filterValues(.cultureId).first ?? catalog.defaultCulture
        let userId = user ?? (event.isBroadcast ? "0" : event.userIds.first ?? "0")
        let rendered = try catalog.render(event, culture: culture, platform: platform)
        let exact = builder.profile == .legacy && !builder.legacyExtras ? " (seed 000's exact bytes: worker.legacy_extras false)" : ""
        print("device:        \(platform), culture \(culture) (template \(rendered.culture)), user \(userId), profile \(builder.profile)\(exact)")
        print("title:         \(rendered.title.isEmpty ? "(none)" : rendered.title)")
        print("body:          \(rendered.body)")

        let deliveryKey = DeliveryKey(messageKey: DeliveryKey.messageKey(forBody: bytes), deviceId: "preview-device", userId: userId)
        let payload = try builder.build(
            rendered, event: event, target: PushTarget(platform: platform, token: token, userId: userId),
            deliveryKey: deliveryKey, now: Date()
        )
        if let apns = payload.apns {
            var headers = "apns-push-type: \(apns.pushType.rawValue), apns-priority: \(apns.priority), apns-collapse-id: \(apns.collapseId)"
            if let expiration = apns.expiration { headers += ", apns-expiration: \(expiration)" }
            print("headers:       \(headers)")
        }
        print("payload (\(payload.body.count) bytes\(payload.wasShortened ? ", body shortened" : "")):")
        print(payload.json.prettyPrinted())
    }

    private func readFile(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read \(path)")
        }
        return [UInt8](data)
    }

    private func printError(_ message: String) {
        FileHandle.standardError.write(Data("\(message)\n".utf8))
    }
}
