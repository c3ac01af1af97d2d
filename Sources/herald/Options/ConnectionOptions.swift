import ArgumentParser

/// Where the broker, the queue and the database are: flags shared by every command that talks
/// to them. Each is also a configuration key and an environment variable (`amqp.url` /
/// `HERALD_AMQP_URL`, `amqp.queue` / `HERALD_AMQP_QUEUE`, `database.url` / `HERALD_DATABASE_URL`).
struct ConnectionOptions: ParsableArguments, SettingFlags {
    @Option(help: "Broker URL (amqp.url, HERALD_AMQP_URL).")
    var amqpURL: String?

    @Option(help: "Queue (amqp.queue, HERALD_AMQP_QUEUE; default w1.pushnotification).")
    var queue: String?

    @Option(help: "PostgreSQL URL (database.url, HERALD_DATABASE_URL).")
    var databaseURL: String?

    func apply(to settings: inout Settings) {
        settings.set(.amqpURL, flag: amqpURL)
        settings.set(.amqpQueue, flag: queue)
        settings.set(.databaseURL, flag: databaseURL)
    }
}
