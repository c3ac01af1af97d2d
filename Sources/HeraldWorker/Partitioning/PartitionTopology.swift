import HeraldAMQP
import HeraldCore
import Logging

/// Declares a partitioned installation's broker objects: Herald's standard layout of the main
/// queue, then the partition queues. An object that exists with other settings is used as it is
/// and logged; for a partition queue that usually means another `worker.partitions` count
/// created it, which the operator must resolve (every process must use the same count).
enum PartitionTopology {
    /// - Throws: ``AMQPError`` from the first declaration that failed.
    static func declare(_ layout: PartitionLayout, on connection: AMQPConnection, logger: Logger) async throws(AMQPError) {
        for warning in try await connection.declare(layout.topology) {
            logger.warning("Broker object exists with other settings; using it as it is", metadata: [LogKey.error: "\(warning)"])
        }
        for queue in layout.queues {
            if let warning = try await connection.declareQueue(queue).warning {
                logger.error(
                    "Partition queue exists with other settings (another worker.partitions count?); using it as it is",
                    metadata: [
                        LogKey.queue: "\(queue.name)", LogKey.partitions: "\(layout.count)", LogKey.error: "\(warning)",
                    ])
            }
        }
    }
}
