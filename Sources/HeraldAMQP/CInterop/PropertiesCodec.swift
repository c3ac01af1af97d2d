internal import CRabbitMQ
import Foundation

/// Converts between ``AMQPProperties`` and `amqp_basic_properties_t` (flags say which fields are set).
enum PropertiesCodec {
    static func encode(_ properties: AMQPProperties, in arena: CArena) -> amqp_basic_properties_t {
        var c = amqp_basic_properties_t()
        var flags: UInt32 = 0
        func set(_ value: String?, _ flag: Int32, _ field: inout amqp_bytes_t) {
            guard let value else { return }
            field = arena.bytes(value)
            flags |= UInt32(flag)
        }
        set(properties.contentType, AMQP_BASIC_CONTENT_TYPE_FLAG, &c.content_type)
        set(properties.contentEncoding, AMQP_BASIC_CONTENT_ENCODING_FLAG, &c.content_encoding)
        if !properties.headers.isEmpty {
            c.headers = FieldTableCodec.encode(properties.headers, in: arena)
            flags |= UInt32(AMQP_BASIC_HEADERS_FLAG)
        }
        if let mode = properties.deliveryMode {
            c.delivery_mode = mode.rawValue
            flags |= UInt32(AMQP_BASIC_DELIVERY_MODE_FLAG)
        }
        if let priority = properties.priority {
            c.priority = priority
            flags |= UInt32(AMQP_BASIC_PRIORITY_FLAG)
        }
        set(properties.correlationID, AMQP_BASIC_CORRELATION_ID_FLAG, &c.correlation_id)
        set(properties.replyTo, AMQP_BASIC_REPLY_TO_FLAG, &c.reply_to)
        set(properties.expiration, AMQP_BASIC_EXPIRATION_FLAG, &c.expiration)
        set(properties.messageID, AMQP_BASIC_MESSAGE_ID_FLAG, &c.message_id)
        if let timestamp = properties.timestamp {
            c.timestamp = UInt64(max(0, timestamp.timeIntervalSince1970.rounded(.down)))
            flags |= UInt32(AMQP_BASIC_TIMESTAMP_FLAG)
        }
        set(properties.type, AMQP_BASIC_TYPE_FLAG, &c.type)
        set(properties.userID, AMQP_BASIC_USER_ID_FLAG, &c.user_id)
        set(properties.appID, AMQP_BASIC_APP_ID_FLAG, &c.app_id)
        c._flags = flags
        return c
    }

    static func decode(_ c: amqp_basic_properties_t) -> AMQPProperties {
        let flags = c._flags
        func has(_ flag: Int32) -> Bool { flags & UInt32(flag) != 0 }
        func text(_ flag: Int32, _ field: amqp_bytes_t) -> String? {
            has(flag) ? FieldTableCodec.string(field) : nil
        }
        return AMQPProperties(
            contentType: text(AMQP_BASIC_CONTENT_TYPE_FLAG, c.content_type),
            contentEncoding: text(AMQP_BASIC_CONTENT_ENCODING_FLAG, c.content_encoding),
            headers: has(AMQP_BASIC_HEADERS_FLAG) ? FieldTableCodec.decode(c.headers) : [:],
            deliveryMode: has(AMQP_BASIC_DELIVERY_MODE_FLAG) ? AMQPDeliveryMode(rawValue: c.delivery_mode) : nil,
            priority: has(AMQP_BASIC_PRIORITY_FLAG) ? c.priority : nil,
            correlationID: text(AMQP_BASIC_CORRELATION_ID_FLAG, c.correlation_id),
            replyTo: text(AMQP_BASIC_REPLY_TO_FLAG, c.reply_to),
            expiration: text(AMQP_BASIC_EXPIRATION_FLAG, c.expiration),
            messageID: text(AMQP_BASIC_MESSAGE_ID_FLAG, c.message_id),
            timestamp: has(AMQP_BASIC_TIMESTAMP_FLAG) ? Date(timeIntervalSince1970: TimeInterval(c.timestamp)) : nil,
            type: text(AMQP_BASIC_TYPE_FLAG, c.type),
            userID: text(AMQP_BASIC_USER_ID_FLAG, c.user_id),
            appID: text(AMQP_BASIC_APP_ID_FLAG, c.app_id)
        )
    }
}
