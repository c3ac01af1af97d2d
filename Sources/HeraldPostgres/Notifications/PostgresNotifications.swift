import Logging

/// An `AsyncSequence` of ``PostgresNotificationEvent``s for one channel, fed by a dedicated
/// connection and thread that `LISTEN`s and waits on the socket.
///
/// The first event is ``PostgresNotificationEvent/listening`` (or
/// ``PostgresNotificationEvent/disconnected(_:)`` if the server cannot be reached). After a
/// lost connection the listener reconnects with backoff, re-LISTENs and yields
/// ``PostgresNotificationEvent/reconnected``. The sequence never throws and ends only when
/// the consumer stops: its task is cancelled, or the sequence and its iterator are released;
/// then the listener's connection is closed and its thread exits.
///
/// Iterate it once. Events are buffered without limit while the consumer is busy.
public struct PostgresNotifications: AsyncSequence, Sendable {
    public typealias Element = PostgresNotificationEvent
    public typealias Failure = Never

    private let handle: Handle

    init(configuration: PostgresConfiguration, channel: String, logger: Logger) {
        let (stream, continuation) = AsyncStream.makeStream(of: PostgresNotificationEvent.self)
        let listener = NotificationListener(
            configuration: configuration, channel: channel, logger: logger, continuation: continuation
        )
        continuation.onTermination = { _ in listener.stop() }
        listener.start()
        self.handle = Handle(stream: stream, listener: listener)
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: handle.stream.makeAsyncIterator(), handle: handle)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<PostgresNotificationEvent>.Iterator
        let handle: Handle

        public mutating func next() async -> PostgresNotificationEvent? {
            await base.next()
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> PostgresNotificationEvent? {
            await base.next(isolation: actor)
        }
    }

    /// Stops the listener when neither the sequence nor its iterator is referenced any more.
    final class Handle: Sendable {
        let stream: AsyncStream<PostgresNotificationEvent>
        let listener: NotificationListener

        init(stream: AsyncStream<PostgresNotificationEvent>, listener: NotificationListener) {
            self.stream = stream
            self.listener = listener
        }

        deinit { listener.stop() }
    }
}
