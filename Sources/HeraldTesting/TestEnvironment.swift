import Foundation

/// Where the integration tests find the real RabbitMQ and PostgreSQL.
///
/// `deploy/local/up.sh` starts both on loopback and writes these variables to
/// `$HERALD_LOCAL_DIR/env`; the defaults match its default ports. A test that cannot reach a
/// service fails with the URL it tried: integration tests never skip.
public enum TestEnvironment {
    public static var amqpURL: String {
        value("HERALD_TEST_AMQP_URL") ?? "amqp://guest:guest@127.0.0.1:5672/"
    }

    public static var databaseURL: String {
        value("HERALD_TEST_DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/herald_test"
    }

    /// `deploy/local/ctl.sh`, used by tests that restart the broker or the database.
    public static var stackControlScript: String {
        if let path = value("HERALD_TEST_STACK_CTL") { return path }
        return packageRoot.appendingPathComponent("deploy/local/ctl.sh").path
    }

    /// The package's top folder, found from this source file's location.
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // HeraldTesting
            .deletingLastPathComponent()  // Sources
            .deletingLastPathComponent()
    }

    /// A name no other test run uses, for queues, exchanges and database schemas.
    public static func uniqueName(_ prefix: String) -> String {
        "\(prefix).\(UInt32.random(in: .min ... .max))"
    }

    private static func value(_ name: String) -> String? {
        guard let raw = ProcessInfo.processInfo.environment[name], !raw.isEmpty else { return nil }
        return raw
    }
}
