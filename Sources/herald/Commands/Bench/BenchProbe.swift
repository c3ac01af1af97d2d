import Foundation
import HeraldCore
import HeraldPostgres

/// What `herald bench` reads before and after a phase, to print costs per delivery: this
/// process's CPU time (the worker runs in it), the CPU time of the local PostgreSQL and RabbitMQ
/// processes (when they run on this machine; every process named `postgres` or `beam.smp`, so
/// other work on them is counted too), and the database's WAL position and row writes.
struct BenchProbe: Sendable {
    struct Reading: Sendable {
        var at = ContinuousClock.now
        /// Seconds of CPU (user + system).
        var ownCPU: Double
        var postgresCPU: Double?
        var brokerCPU: Double?
        /// Bytes of WAL written since the cluster began (`pg_current_wal_lsn`), cluster-wide.
        var walBytes: Int64?
        /// Rows inserted and updated per table of this database (`pg_stat_user_tables`).
        var rowWrites: [String: Int] = [:]
    }

    /// Costs between two readings, per delivery.
    struct Costs: Codable, Sendable {
        var workerCPUMicroseconds: Double
        var postgresCPUMicroseconds: Double?
        var brokerCPUMicroseconds: Double?
        var walBytes: Double?
        var rowWrites: Double?
        /// Cores busy on average: the worker, PostgreSQL, RabbitMQ.
        var workerCores: Double
        var postgresCores: Double?
        var brokerCores: Double?
    }

    let client: PostgresClient

    /// PostgreSQL 15 publishes a session's table statistics at most once a second, and when the
    /// session ends: wait that long first when the row counts matter (the bench's workers close
    /// their sessions at the end of each phase).
    func read(settleStatistics: Bool = false) async -> Reading {
        if settleStatistics { try? await Task.sleep(for: .milliseconds(1_200)) }
        var reading = Reading(ownCPU: ProcessCPU.seconds() ?? 0)
        reading.postgresCPU = Self.cpuSeconds(ofProcessesNamed: "postgres")
        reading.brokerCPU = Self.cpuSeconds(ofProcessesNamed: "beam.smp")
        if let row = try? await client.query("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint", []).first {
            reading.walBytes = (try? row.decode(Int.self, at: 0)).map(Int64.init)
        }
        if let rows = try? await client.query("SELECT relname::text, (n_tup_ins + n_tup_upd)::bigint FROM pg_stat_user_tables", []) {
            for row in rows {
                guard let name = try? row.decode(String.self, at: 0), let writes = try? row.decode(Int.self, at: 1) else { continue }
                reading.rowWrites[name] = writes
            }
        }
        reading.at = ContinuousClock.now
        return reading
    }

    static func costs(
        from start: Reading, to end: Reading, deliveries: Int, tables: Set<String> = ["journal", "messages", "device_positions", "devices"]
    ) -> Costs {
        let n = Double(max(1, deliveries))
        let seconds = max(1e-9, (end.at - start.at).seconds)
        func diff(_ a: Double?, _ b: Double?) -> Double? { a.flatMap { a in b.map { $0 - a } } }
        let rows = tables.reduce(0) { $0 + (end.rowWrites[$1] ?? 0) - (start.rowWrites[$1] ?? 0) }
        return Costs(
            workerCPUMicroseconds: (end.ownCPU - start.ownCPU) / n * 1e6,
            postgresCPUMicroseconds: diff(start.postgresCPU, end.postgresCPU).map { $0 / n * 1e6 },
            brokerCPUMicroseconds: diff(start.brokerCPU, end.brokerCPU).map { $0 / n * 1e6 },
            walBytes: diff(start.walBytes.map(Double.init), end.walBytes.map(Double.init)).map { $0 / n },
            rowWrites: end.rowWrites.isEmpty ? nil : Double(rows) / n,
            workerCores: (end.ownCPU - start.ownCPU) / seconds,
            postgresCores: diff(start.postgresCPU, end.postgresCPU).map { $0 / seconds },
            brokerCores: diff(start.brokerCPU, end.brokerCPU).map { $0 / seconds }
        )
    }

    /// The server's durability settings, as this session sees them (the worker's sessions
    /// set none of their own).
    func postgresSettings() async -> BenchResult.PostgresSettings? {
        guard
            let row = try? await client.query(
                "SELECT current_setting('fsync'), current_setting('synchronous_commit'), current_setting('full_page_writes')", []
            ).first,
            let fsync = try? row.decode(String.self, at: 0), let commit = try? row.decode(String.self, at: 1),
            let fullPageWrites = try? row.decode(String.self, at: 2)
        else { return nil }
        return BenchResult.PostgresSettings(fsync: fsync, synchronousCommit: commit, fullPageWrites: fullPageWrites)
    }

    // MARK: /proc

    /// The CPU seconds of every process whose command name is `name`, or nil when none runs here.
    /// Counts the children each has waited for: a PostgreSQL backend or autovacuum worker that
    /// ends between two readings moves its CPU into the postmaster's, so the sum only grows.
    /// Without that, a process that ended took its earlier CPU out of the difference (one round
    /// then measured PostgreSQL far cheaper than the rounds on either side of it).
    static func cpuSeconds(ofProcessesNamed name: String) -> Double? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        var total = 0.0
        var found = false
        for pid in entries where pid.first?.isNumber == true {
            guard let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
                comm.trimmingCharacters(in: .newlines) == name, let seconds = ProcessCPU.seconds(pid: pid, includingEndedChildren: true)
            else { continue }
            total += seconds
            found = true
        }
        return found ? total : nil
    }
}
