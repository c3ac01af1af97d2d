import HeraldAMQP
import Logging

/// `/readyz`'s broker check for `herald api`: keeps one AMQP connection and reopens it when it
/// was lost; the check fails when the broker cannot be reached within the connect timeout.
actor BrokerProbe {
    private let configuration: AMQPConfiguration
    private let logger: Logger
    private var connection: AMQPConnection?

    init(configuration: AMQPConfiguration, logger: Logger) {
        var configuration = configuration
        configuration.connectTimeout = .seconds(2)
        self.configuration = configuration
        self.logger = logger
    }

    func check() async throws {
        if let connection, connection.isOpen { return }
        connection = try await AMQPConnection.connect(configuration, logger: logger)
    }

    func close() async {
        await connection?.close()
        connection = nil
    }
}
