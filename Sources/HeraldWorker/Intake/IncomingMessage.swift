import Foundation
import HeraldAMQP
import HeraldCore

/// What the intake reads from an AMQP message besides its body: the message key, the
/// `AvoidDublication` header and the publish time.
enum IncomingMessage {
    /// Seed 000's header (its spelling); `AvoidDuplication` is accepted too.
    static let avoidDuplicationHeaders = ["AvoidDublication", "AvoidDuplication"]
    /// Milliseconds since 1970 when the producer published (RabbitMQ's `timestamp_in_ms`
    /// convention); `herald publish` sets it. Without it the AMQP `timestamp` (seconds) is used.
    static let publishedAtHeader = "timestamp_in_ms"

    /// The AMQP `message-id` if present, else the SHA-256 of the body: the same message
    /// redelivered, or re-published with the same body, has the same key.
    static func messageKey(_ delivery: AMQPDelivery) -> String {
        if let id = delivery.properties.messageID, !id.isEmpty { return id }
        return DeliveryKey.messageKey(forBody: delivery.body)
    }

    /// Whether the producer asked for duplicates to be dropped (`AvoidDublication: true`, as a
    /// boolean or the string `true`).
    static func avoidsDuplication(_ delivery: AMQPDelivery) -> Bool {
        for name in avoidDuplicationHeaders {
            guard let value = delivery.properties.headers[name] else { continue }
            if let flag = value.boolValue { return flag }
            if let text = value.stringValue { return text.trimmingCharacters(in: .whitespaces).lowercased() == "true" }
            if let number = value.intValue { return number != 0 }
        }
        return false
    }

    static func publishedAt(_ delivery: AMQPDelivery) -> Date? {
        if let ms = delivery.properties.headers[publishedAtHeader]?.intValue, ms > 0 {
            return Date(timeIntervalSince1970: Double(ms) / 1000)
        }
        return delivery.properties.timestamp
    }
}
