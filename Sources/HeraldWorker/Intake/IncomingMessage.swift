import Foundation
import HeraldAMQP
import HeraldCore

/// What the intake reads from an AMQP message besides its body: the message key, the
/// `AvoidDublication` header and the publish time.
enum IncomingMessage {
    /// Milliseconds since 1970 when the producer published (RabbitMQ's `timestamp_in_ms`
    /// convention); `herald publish` sets it. Without it the AMQP `timestamp` (seconds) is used.
    static let publishedAtHeader = "timestamp_in_ms"

    /// The AMQP `message-id` if present, else the SHA-256 of the body: the same message
    /// redelivered, or re-published with the same body, has the same key.
    static func messageKey(_ delivery: AMQPDelivery) -> String {
        if let id = delivery.properties.messageID, !id.isEmpty { return id }
        return DeliveryKey.messageKey(forBody: delivery.body)
    }

    /// Whether the producer asked for duplicates to be dropped: seed 000's header
    /// `AvoidDublication` (its spelling; `AvoidDuplication` is accepted too) true, as a boolean,
    /// the string `true` or a non-zero number.
    static func avoidsDuplication(_ delivery: AMQPDelivery) -> Bool {
        // The table taken once and looked up by literals: this runs for every message.
        let headers = delivery.properties.headers
        func flag(_ value: AMQPFieldValue?) -> Bool? {
            guard let value else { return nil }
            if let flag = value.boolValue { return flag }
            if let text = value.stringValue { return text.trimmingCharacters(in: .whitespaces).lowercased() == "true" }
            if let number = value.intValue { return number != 0 }
            return nil
        }
        return flag(headers["AvoidDublication"]) ?? flag(headers["AvoidDuplication"]) ?? false
    }

    static func publishedAt(_ delivery: AMQPDelivery) -> Date? {
        if let ms = delivery.properties.headers[publishedAtHeader]?.intValue, ms > 0 {
            return Date(timeIntervalSince1970: Double(ms) / 1000)
        }
        return delivery.properties.timestamp
    }
}
