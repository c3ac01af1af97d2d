import Foundation
import HeraldCore
import HeraldDelivery

/// What `herald send` sends: a template event rendered per device as the worker renders it, or
/// a raw JSON payload sent as is.
enum PushContent: Sendable {
    case template(Event)
    case raw(JSONValue)

    /// The content of `--event` and `--param`, or of `--payload` (a file, '-' standard input).
    static func read(event: String?, params: [String], payloadPath: String?) throws -> PushContent {
        if let event {
            let parameters = params.enumerated().map { EventParameter(name: "p\($0.offset)", value: $0.element) }
            return .template(Event(id: event, type: .message, dateTime: EventTimestamp(date: Date()), params: parameters))
        }
        let path = payloadPath ?? "-"
        let data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: path)
        guard let data else { throw SendError("cannot read \(path)") }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: Array(data), maxDepth: 64)
        } catch {
            throw SendError("\(path) is not JSON: \(error)")
        }
        guard case .object = json else { throw SendError("\(path) is not a JSON object") }
        return .raw(json)
    }

    /// The delivery for `recipient`: a collapse id of its own (a test push never replaces a
    /// real one on the device), the template rendered in `culture`, or the raw payload (FCM: the
    /// `message` object, given bare or inside `{"message":…}`, with the recipient's token).
    func delivery(to recipient: SendRecipient, catalog: TemplateCatalog?, culture: String, builder: PayloadBuilder) throws -> PushDelivery {
        let target = recipient.target
        let key = DeliveryKey(messageKey: "herald-send-\(UUID().uuidString)", deviceId: recipient.deviceId, userId: target.userId, app: target.app)
        let payload: PushPayload
        let eventId: String
        switch self {
        case .template(let event):
            guard let catalog else { throw SendError("no templates") }
            let rendered = try catalog.render(event, culture: culture, platform: target.platform)
            payload = try builder.build(rendered, event: event, target: target, deliveryKey: key, now: Date())
            eventId = event.id
        case .raw(let json):
            payload = Self.rawPayload(json, target: target, key: key)
            eventId = "herald-send"
        }
        return PushDelivery(
            deliveryKey: key, deviceId: recipient.deviceId, userId: target.userId, eventId: eventId, position: 0, target: target, payload: payload)
    }

    static func rawPayload(_ json: JSONValue, target: PushTarget, key: DeliveryKey) -> PushPayload {
        switch target.platform {
        case .ios:
            // A notification with nothing to show is a background push (APNs wants priority 5).
            let aps = json["aps"]
            let silent = aps?["alert"] == nil && aps?["sound"] == nil && aps?["badge"] == nil
            let options = APNsRequestOptions(pushType: silent ? .background : .alert, priority: silent ? 5 : 10, expiration: nil, collapseId: key.rawValue)
            return PushPayload(platform: .ios, profile: .modern, json: json, apns: options, deliveryKey: key, wasShortened: false)
        case .android:
            var message: [String: JSONValue] = [:]
            if case .object(let members) = json["message"] ?? json { message = members }
            message["token"] = .string(target.token)
            return PushPayload(
                platform: .android, profile: .modern, json: .object(["message": .object(message)]), apns: nil, deliveryKey: key, wasShortened: false)
        }
    }
}
