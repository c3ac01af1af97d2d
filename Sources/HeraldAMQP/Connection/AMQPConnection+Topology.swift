/// Declaring and inspecting exchanges, queues and bindings.
extension AMQPConnection {
    /// Declares an exchange (`exchange.declare`).
    ///
    /// If it already exists with other settings (406), the existing one is used as it is and a
    /// warning is returned for the caller to log.
    /// - Throws: ``AMQPError`` (``AMQPError/Code/accessRefused`` for reserved `amq.` names, or a
    ///   connection-level code).
    @discardableResult
    public func declareExchange(_ exchange: AMQPExchange) async throws(AMQPError) -> AMQPTopologyWarning? {
        try await perform { driver throws(AMQPError) in try driver.declareExchange(exchange) }
    }

    /// Declares a queue (`queue.declare`) and returns its counts.
    ///
    /// If the queue already exists with other arguments, the broker answers 406
    /// PRECONDITION_FAILED and closes the channel; Herald then reopens it, declares passively,
    /// and returns the existing queue's state with ``AMQPQueueState/warning`` set: the queue is
    /// used as it is. Changing it is an operator's decision (delete and re-create).
    /// - Throws: ``AMQPError`` (``AMQPError/Code/resourceLocked`` for another connection's exclusive
    ///   queue, or a connection-level code).
    @discardableResult
    public func declareQueue(_ queue: AMQPQueue) async throws(AMQPError) -> AMQPQueueState {
        try await perform { driver throws(AMQPError) in try driver.declareQueue(queue) }
    }

    /// Binds a queue to an exchange (`queue.bind`).
    /// - Throws: ``AMQPError`` (``AMQPError/Code/notFound`` when either does not exist).
    public func bindQueue(_ binding: AMQPBinding) async throws(AMQPError) {
        try await perform { driver throws(AMQPError) in try driver.bindQueue(binding) }
    }

    /// Removes a binding (`queue.unbind`).
    /// - Throws: ``AMQPError``.
    public func unbindQueue(_ binding: AMQPBinding) async throws(AMQPError) {
        try await perform { driver throws(AMQPError) in try driver.unbindQueue(binding) }
    }

    /// Declares Herald's standard layout (see ``HeraldTopology``): exchanges, then queues, then
    /// bindings. Returns the warnings for objects that existed with other settings.
    /// - Throws: ``AMQPError`` from the first declaration that failed.
    @discardableResult
    public func declare(_ topology: HeraldTopology) async throws(AMQPError) -> [AMQPTopologyWarning] {
        try await perform { driver throws(AMQPError) in
            var warnings: [AMQPTopologyWarning] = []
            for exchange in topology.exchanges {
                if let warning = try driver.declareExchange(exchange) { warnings.append(warning) }
                driver.arena.reset()
            }
            for queue in topology.queues {
                if let warning = try driver.declareQueue(queue).warning { warnings.append(warning) }
                driver.arena.reset()
            }
            for binding in topology.bindings {
                try driver.bindQueue(binding)
                driver.arena.reset()
            }
            return warnings
        }
    }

    /// A queue's depth and consumer count by a passive declare (nothing is created). For
    /// `herald drain`.
    /// - Throws: ``AMQPError`` with ``AMQPError/Code/notFound`` when the queue does not exist.
    public func queueState(_ name: String) async throws(AMQPError) -> AMQPQueueState {
        try await perform { driver throws(AMQPError) in try driver.queueDeclare(AMQPQueue(name: name), passive: true) }
    }

    /// Removes every ready message from a queue; returns how many were removed.
    /// - Throws: ``AMQPError`` (``AMQPError/Code/notFound``).
    @discardableResult
    public func purgeQueue(_ name: String) async throws(AMQPError) -> UInt32 {
        try await perform { driver throws(AMQPError) in try driver.purgeQueue(name) }
    }

    /// Deletes a queue; returns how many messages it held. RabbitMQ answers a missing queue with
    /// success.
    /// - Throws: ``AMQPError`` (``AMQPError/Code/preconditionFailed`` when `ifUnused`/`ifEmpty`
    ///   do not hold).
    @discardableResult
    public func deleteQueue(_ name: String, ifUnused: Bool = false, ifEmpty: Bool = false) async throws(AMQPError) -> UInt32 {
        try await perform { driver throws(AMQPError) in try driver.deleteQueue(name, ifUnused: ifUnused, ifEmpty: ifEmpty) }
    }

    /// Deletes an exchange.
    /// - Throws: ``AMQPError`` (``AMQPError/Code/preconditionFailed`` when `ifUnused` does not hold).
    public func deleteExchange(_ name: String, ifUnused: Bool = false) async throws(AMQPError) {
        try await perform { driver throws(AMQPError) in try driver.deleteExchange(name, ifUnused: ifUnused) }
    }
}
