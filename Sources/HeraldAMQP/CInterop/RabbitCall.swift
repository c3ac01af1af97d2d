internal import CRabbitMQ

/// What a librabbitmq RPC answered, classified once.
enum RabbitReply {
    /// The expected reply method (its decoded struct lives in a connection pool: copy it now).
    case ok(amqp_method_t)
    /// The library failed (socket, timeout, protocol): the connection is unusable.
    case library(AMQPError)
    /// The broker closed the channel (`channel.close`); the driver must answer `close-ok`.
    case channelClosed(AMQPError)
    /// The broker closed the connection (`connection.close`); the driver must answer `close-ok`.
    case connectionClosed(AMQPError)
}

/// The one funnel from librabbitmq's return codes to ``AMQPError``: the status text
/// (`amqp_error_string2`) or the broker's reply code/text is read right away and the failing call
/// is named.
enum RabbitCall {
    /// Error for a negative `AMQP_STATUS_*` from `call`.
    static func statusError(_ status: Int32, call: String, subject: String? = nil) -> AMQPError {
        let text = amqp_error_string2(status).map { String(cString: $0) } ?? "status \(status)"
        return AMQPError(code: code(for: status), call: call, message: text, libraryStatus: status, subject: subject)
    }

    /// Throws when `status` (an `AMQP_STATUS_*` or a byte count) is negative.
    @discardableResult
    static func check(_ status: Int32, call: String, subject: String? = nil) throws(AMQPError) -> Int32 {
        if status < 0 { throw statusError(status, call: call, subject: subject) }
        return status
    }

    /// Classifies the reply of an RPC (`amqp_get_rpc_reply` after a framing call, or a call that
    /// returns `amqp_rpc_reply_t`).
    static func classify(_ reply: amqp_rpc_reply_t, call: String, subject: String? = nil) -> RabbitReply {
        switch reply.reply_type {
        case AMQP_RESPONSE_NORMAL:
            return .ok(reply.reply)
        case AMQP_RESPONSE_SERVER_EXCEPTION:
            return serverMethod(reply.reply, call: call, subject: subject)
                ?? .library(
                    AMQPError(
                        code: .protocolError,
                        call: call,
                        message: "unexpected method 0x\(String(reply.reply.id, radix: 16)) in reply",
                        subject: subject
                    )
                )
        case AMQP_RESPONSE_LIBRARY_EXCEPTION:
            return .library(statusError(reply.library_error, call: call, subject: subject))
        default:  // AMQP_RESPONSE_NONE: EOF on the socket
            return .library(
                AMQPError(code: .connectionLost, call: call, message: "no reply: the socket was closed", subject: subject)
            )
        }
    }

    /// Decodes a `channel.close` or `connection.close` the broker sent; `nil` for other methods.
    static func serverMethod(_ method: amqp_method_t, call: String, subject: String? = nil) -> RabbitReply? {
        switch method.id {
        case AMQP_CHANNEL_CLOSE_METHOD:
            let close = method.decoded.assumingMemoryBound(to: amqp_channel_close_t.self).pointee
            let text = FieldTableCodec.string(close.reply_text)
            return .channelClosed(channelCloseError(replyCode: close.reply_code, text: text, call: call, subject: subject))
        case AMQP_CONNECTION_CLOSE_METHOD:
            let close = method.decoded.assumingMemoryBound(to: amqp_connection_close_t.self).pointee
            let text = FieldTableCodec.string(close.reply_text)
            return .connectionClosed(
                AMQPError(code: .connectionLost, call: call, message: text, replyCode: close.reply_code, subject: subject)
            )
        default:
            return nil
        }
    }

    static func channelCloseError(replyCode: UInt16, text: String, call: String, subject: String?) -> AMQPError {
        let code: AMQPError.Code =
            switch replyCode {
            case 403: .accessRefused
            case 404: .notFound
            case 405: .resourceLocked
            case 406: .preconditionFailed
            default: .channelClosed
            }
        return AMQPError(code: code, call: call, message: text, replyCode: replyCode, subject: subject)
    }

    private static func code(for status: Int32) -> AMQPError.Code {
        switch status {
        case AMQP_STATUS_TIMEOUT.rawValue:
            .timeout
        case AMQP_STATUS_HOSTNAME_RESOLUTION_FAILED.rawValue:
            .connectionFailed
        case AMQP_STATUS_BAD_AMQP_DATA.rawValue, AMQP_STATUS_UNKNOWN_CLASS.rawValue,
            AMQP_STATUS_UNKNOWN_METHOD.rawValue, AMQP_STATUS_UNEXPECTED_STATE.rawValue,
            AMQP_STATUS_WRONG_METHOD.rawValue, AMQP_STATUS_INCOMPATIBLE_AMQP_VERSION.rawValue:
            .protocolError
        case AMQP_STATUS_INVALID_PARAMETER.rawValue, AMQP_STATUS_TABLE_TOO_BIG.rawValue:
            .invalidArgument
        case AMQP_STATUS_SSL_ERROR.rawValue, AMQP_STATUS_SSL_HOSTNAME_VERIFY_FAILED.rawValue,
            AMQP_STATUS_SSL_PEER_VERIFY_FAILED.rawValue, AMQP_STATUS_SSL_CONNECTION_FAILED.rawValue,
            AMQP_STATUS_SSL_SET_ENGINE_FAILED.rawValue:
            .tlsFailed
        default:
            // Socket errors, EOF, missed heartbeats, allocation failures: the connection is gone.
            .connectionLost
        }
    }
}
