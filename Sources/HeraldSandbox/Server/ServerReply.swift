/// How a ``HTTP2Server/Responder`` answers one request: with a response it already has, at once
/// or after a fixed delay, or from async work (a signature to verify, a handler that sleeps).
///
/// A response in hand is written on the connection's event loop without a task: a delay is a
/// timer on that loop, not a sleeping task. That is what lets `herald sandbox` answer tens of
/// thousands of requests per second, and imitate a provider's round trip for all of them at
/// once. Only ``later(after:_:)`` runs a task (on the server's dispatcher, so that shutdown can
/// cancel it).
public struct ServerReply: Sendable {
    enum Kind: Sendable {
        case response(ServerResponse)
        case later(@Sendable () async -> ServerResponse)
    }

    let kind: Kind
    /// Written this long after the response is known (zero: at once).
    let delay: Duration

    /// `response`, written at once, or `after` later.
    public static func now(_ response: ServerResponse, after delay: Duration = .zero) -> ServerReply {
        ServerReply(kind: .response(response), delay: max(.zero, delay))
    }

    /// The response `body` makes, written when it returns (and `after` later).
    public static func later(after delay: Duration = .zero, _ body: @escaping @Sendable () async -> ServerResponse) -> ServerReply {
        ServerReply(kind: .later(body), delay: max(.zero, delay))
    }

    /// The same reply, written `extra` later.
    public func delayed(by extra: Duration) -> ServerReply {
        extra <= .zero ? self : ServerReply(kind: kind, delay: delay + extra)
    }
}
