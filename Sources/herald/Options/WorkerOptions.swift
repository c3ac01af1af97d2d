import ArgumentParser

/// The worker's tuning flags, shared by `herald worker`, `herald serve` and `herald drain`. Each is also a
/// configuration key and an environment variable (`worker.threads` / `HERALD_WORKER_THREADS`…).
struct WorkerOptions: ParsableArguments, SettingFlags {
    @Option(
        help:
            "Lanes: users with a delivery in flight at once (worker.threads; default what the sender carries at once, 400 for APNs and FCM, 64 for log and null)."
    )
    var threads: Int?

    @Option(help: "Unacknowledged messages held at once (amqp.prefetch, default 300).")
    var prefetch: Int?

    @Option(help: "Partition queues keeping each user's order across worker processes; 0 = off (worker.partitions, default 0; the same K in every process).")
    var partitions: Int?

    @Option(help: "Where payloads go: providers, log or null (worker.sender, HERALD_WORKER_SENDER; required).")
    var sender: String?

    @Option(help: "File the log sender appends to (worker.log_sender_file, default standard output).")
    var logSenderFile: String?

    func apply(to settings: inout Settings) {
        settings.set(.workerThreads, flag: threads.map(String.init))
        settings.set(.amqpPrefetch, flag: prefetch.map(String.init))
        settings.set(.workerSender, flag: sender)
        settings.set(.workerLogSenderFile, flag: logSenderFile)
        settings.set(.workerPartitions, flag: partitions.map(String.init))
    }
}
