/// Herald's standard broker layout, derived from one queue name.
///
/// For the default queue `w1.pushnotification`:
///
/// | object | name | settings |
/// |---|---|---|
/// | exchange | `herald` (``exchange``) | direct, durable |
/// | queue | `w1.pushnotification` (``queue``) | durable, ``queueType``, dead-letters to the DLX |
/// | binding | queue ← exchange | routing key `w1.pushnotification` (``routingKey``) |
/// | dead-letter exchange | `w1.pushnotification.dlx` (``deadLetterExchange``) | direct, durable |
/// | dead-letter queue | `w1.pushnotification.dead` (``deadLetterQueue``) | durable, same type |
/// | binding | dead queue ← DLX | routing key = the queue name |
///
/// Producers publish to exchange `herald` with routing key `w1.pushnotification` (the default
/// exchange with the queue name works too). The main queue carries `x-dead-letter-exchange =
/// <queue>.dlx` and `x-dead-letter-routing-key = <queue>`, so a `nack(requeue: false)` or a
/// `reject` lands in `<queue>.dead` with the broker's `x-death` header. Herald's worker publishes
/// its own dead letters (with an `x-herald-error` header) to the DLX with the same routing key.
public struct HeraldTopology: Sendable, Hashable {
    /// The default exchange name producers publish to.
    public static let defaultExchange = "herald"
    /// The default queue and routing key (seed 000).
    public static let defaultQueue = "w1.pushnotification"

    /// Exchange producers publish to.
    public var exchange: String
    /// The work queue.
    public var queue: String
    /// Routing key binding the queue to the exchange; the queue name by default.
    public var routingKey: String
    /// Classic or quorum; applies to the work queue and its dead-letter queue.
    public var queueType: AMQPQueueType
    /// `x-single-active-consumer` on the work queue (for an ingest stage that must be alone).
    public var singleActiveConsumer: Bool
    /// Extra arguments for the work queue (e.g. `x-delivery-limit` on a quorum queue).
    public var queueArguments: AMQPTable

    public init(
        exchange: String = HeraldTopology.defaultExchange,
        queue: String = HeraldTopology.defaultQueue,
        routingKey: String? = nil,
        queueType: AMQPQueueType = .classic,
        singleActiveConsumer: Bool = false,
        queueArguments: AMQPTable = [:]
    ) {
        self.exchange = exchange
        self.queue = queue
        self.routingKey = routingKey ?? queue
        self.queueType = queueType
        self.singleActiveConsumer = singleActiveConsumer
        self.queueArguments = queueArguments
    }

    /// `<queue>.dlx`
    public var deadLetterExchange: String { queue + ".dlx" }
    /// `<queue>.dead`
    public var deadLetterQueue: String { queue + ".dead" }
    /// The routing key dead letters carry (and the dead queue's binding key): the queue name.
    public var deadLetterRoutingKey: String { queue }

    /// Exchanges in declaration order.
    public var exchanges: [AMQPExchange] {
        [
            AMQPExchange(name: deadLetterExchange, type: .direct),
            AMQPExchange(name: exchange, type: .direct),
        ]
    }

    /// Queues in declaration order (dead-letter queue first, so nothing is dead-lettered into
    /// the void while the layout is being built).
    public var queues: [AMQPQueue] {
        [
            AMQPQueue(name: deadLetterQueue, type: queueType),
            AMQPQueue(
                name: queue,
                type: queueType,
                deadLetterExchange: deadLetterExchange,
                deadLetterRoutingKey: deadLetterRoutingKey,
                singleActiveConsumer: singleActiveConsumer,
                arguments: queueArguments
            ),
        ]
    }

    public var bindings: [AMQPBinding] {
        [
            AMQPBinding(queue: deadLetterQueue, exchange: deadLetterExchange, routingKey: deadLetterRoutingKey),
            AMQPBinding(queue: queue, exchange: exchange, routingKey: routingKey),
        ]
    }
}
