/// AMQP's size limits, checked before anything reaches librabbitmq.
///
/// Why: librabbitmq encodes a frame just before writing it. A name longer than a short string
/// allows (255 bytes) makes that encoding fail; for `basic.publish` the method frame may already
/// be on the wire when the header frame fails, which desynchronises the connection and the broker
/// drops it. Checking here turns such input into an ``AMQPError/Code/invalidArgument`` for that
/// one call and keeps the connection.
enum WireLimits {
    /// Short strings: names, routing keys, consumer tags, most basic properties.
    static let shortString = 255
    /// Field table keys.
    static let fieldName = 128

    static func checkShortString(_ value: String, _ field: String, call: String) throws(AMQPError) {
        let length = value.utf8.count
        guard length <= shortString else {
            throw AMQPError(
                code: .invalidArgument,
                call: call,
                message: "\(field) is \(length) bytes; AMQP allows at most \(shortString)"
            )
        }
    }

    static func checkTable(_ table: AMQPTable, _ field: String, call: String) throws(AMQPError) {
        for (key, value) in table {
            guard key.utf8.count <= fieldName else {
                throw AMQPError(
                    code: .invalidArgument,
                    call: call,
                    message: "a key in \(field) is \(key.utf8.count) bytes; AMQP allows at most \(fieldName)"
                )
            }
            try checkValue(value, field, call: call)
        }
    }

    private static func checkValue(_ value: AMQPFieldValue, _ field: String, call: String) throws(AMQPError) {
        switch value {
        case .table(let nested): try checkTable(nested, field, call: call)
        case .array(let elements): for element in elements { try checkValue(element, field, call: call) }
        default: break
        }
    }

    /// Everything of an outgoing message that must fit AMQP's limits, plus a size estimate of its
    /// properties against the negotiated frame size (the properties travel in one frame).
    static func check(_ message: AMQPOutgoingMessage, frameMax: Int) throws(AMQPError) {
        let call = "basic.publish"
        try checkShortString(message.exchange, "the exchange name", call: call)
        try checkShortString(message.routingKey, "the routing key", call: call)
        let properties = message.properties
        let shortProperties: [(String?, String)] = [
            (properties.contentType, "content-type"), (properties.contentEncoding, "content-encoding"),
            (properties.correlationID, "correlation-id"), (properties.replyTo, "reply-to"),
            (properties.expiration, "expiration"), (properties.messageID, "message-id"),
            (properties.type, "type"), (properties.userID, "user-id"), (properties.appID, "app-id"),
        ]
        var estimate = 64
        for case (let value?, let name) in shortProperties {
            try checkShortString(value, name, call: call)
            estimate += value.utf8.count + 1
        }
        try checkTable(properties.headers, "the headers", call: call)
        estimate += encodedSize(properties.headers)
        guard estimate < frameMax - 8 else {
            throw AMQPError(
                code: .invalidArgument,
                call: call,
                message: "the message properties take about \(estimate) bytes; the frame limit is \(frameMax)"
            )
        }
    }

    /// An upper bound of a table's encoded size.
    static func encodedSize(_ table: AMQPTable) -> Int {
        table.reduce(4) { $0 + 1 + $1.key.utf8.count + encodedSize($1.value) }
    }

    private static func encodedSize(_ value: AMQPFieldValue) -> Int {
        switch value {
        case .bool, .void: 2
        case .int, .double, .timestamp: 9
        case .decimal: 6
        case .string(let text): 5 + text.utf8.count
        case .bytes(let raw): 5 + raw.count
        case .array(let elements): elements.reduce(5) { $0 + encodedSize($1) }
        case .table(let nested): 1 + encodedSize(nested)
        }
    }
}
