import Foundation
import HeraldCore
import HeraldDelivery
import HeraldTesting
import Testing

@testable import herald

@Suite struct SettingsTests {
    @Test func flagsOverrideEnvironmentOverrideFile() throws {
        var settings = Settings(
            file: [.workerThreads: "2", .amqpQueue: "from-file"],
            environment: ["HERALD_WORKER_THREADS": "4"]
        )
        #expect(try settings.int(.workerThreads, default: 8) == 4)
        #expect(settings.string(.amqpQueue) == "from-file")
        settings.set(.workerThreads, flag: "16")
        #expect(try settings.int(.workerThreads, default: 8) == 16)
        settings.set(.workerThreads, flag: nil)
        #expect(try settings.int(.workerThreads, default: 8) == 16)
        #expect(try settings.int(.amqpPrefetch, default: 200) == 200)
    }

    @Test func invalidValueNamesKeyAndSource() {
        let settings = Settings(file: [:], environment: ["HERALD_WORKER_THREADS": "many"])
        #expect {
            try settings.int(.workerThreads, default: 8, range: 1...512)
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.code == .invalidValue && error?.key == "worker.threads"
                && error?.source == "HERALD_WORKER_THREADS" && error?.description.contains("'many'") == true
        }
    }

    @Test func secretValuesAreNeverShown() {
        let settings = Settings(file: [:], environment: ["HERALD_PROXY_PASSWORD": "hunter2"])
        let error = #expect(throws: ConfigurationError.self) {
            try settings.bool(.proxyPassword, default: false)
        }
        #expect(error?.description.contains("hunter2") == false)
    }

    @Test func missingRequiredKeyExplainsAllThreeWays() {
        var settings = Settings(file: [:], environment: [:])
        settings.set(.databaseURL, flag: nil)  // the command has --database-url
        let error = #expect(throws: ConfigurationError.self) { try settings.require(.databaseURL) }
        #expect(error?.code == .missing)
        #expect(error?.description.contains("HERALD_DATABASE_URL") == true)
        #expect(error?.description.contains("--database-url") == true)
        #expect(error?.description.contains("`database.url` in the configuration file") == true)
    }

    @Test(arguments: [
        ("250ms", Duration.milliseconds(250)), ("30s", .seconds(30)), ("5m", .seconds(300)),
        ("2h", .seconds(7200)), ("1d", .seconds(86_400)), ("1.5", .milliseconds(1500)),
    ])
    func durations(text: String, expected: Duration) {
        #expect(Settings.parseDuration(text) == expected)
    }

    @Test(arguments: ["", "abc", "-1s", "5x", "ms"])
    func badDurations(text: String) {
        #expect(Settings.parseDuration(text) == nil)
    }

    @Test func fileIsFlattenedAndCheckedAgainstTheRegistry() throws {
        let values = try ConfigurationFile.parse(
            """
            amqp:
              queue: orders
              prefetch: 50
            fcm:
              service_account_path: [/a.json, /b.json]
            """, path: "herald.yaml")
        #expect(values[.amqpQueue] == "orders")
        #expect(values[.amqpPrefetch] == "50")
        #expect(values[.fcmServiceAccountPath] == "/a.json,/b.json")

        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.parse("amqp:\n  qeue: orders\n", path: "herald.yaml")
        }
        #expect(error?.code == .unknownKey)
        #expect(error?.key == "amqp.qeue")
    }

    @Test func everyKeyHasAUniqueEnvironmentName() {
        let names = SettingKey.all.map(\.environmentName)
        #expect(Set(names).count == names.count)
        #expect(SettingKey.amqpQueue.environmentName == "HERALD_AMQP_QUEUE")
        #expect(SettingKey.workerThreads.environmentName == "HERALD_WORKER_THREADS")
    }
}

/// `log.format` and `log.level` as an operator sets them on a real command.
@Suite struct LogFormatTests {
    @Test func jsonLogLinesCarryLevelLabelMessageAndMetadata() throws {
        let result = try HeraldCLI.run(
            ["migrate", "--database-url", "postgres://postgres@127.0.0.1:1/none"],
            environment: [
                "HERALD_LOG_FORMAT": "json", "HERALD_LOG_LEVEL": "debug",
            ], timeout: .seconds(60))
        #expect(result.status != 0)
        let line = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix("{") })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["label"] == "herald.migrate")
        #expect(object["level"] == "warning")
        #expect(object["message"]?.isEmpty == false)
        #expect(object["error"]?.contains("port 1") == true)
        #expect(object["ts"]?.hasSuffix("Z") == true)
    }

    @Test(arguments: [["HERALD_LOG_FORMAT": "xml"], ["HERALD_LOG_LEVEL": "loud"]])
    func unknownFormatsAndLevelsAreRefused(_ environment: [String: String]) throws {
        let result = try HeraldCLI.run(["config", "show"], environment: environment, timeout: .seconds(30))
        #expect(result.status != 0)
        #expect(result.stderr.contains("is not one of"))
    }

    /// The lanes follow what the sender carries at once unless `worker.threads` says otherwise;
    /// 64 for a sender without a bound.
    @Test func lanesDefaultToTheSendersConcurrency() throws {
        struct Carrying: PushSender {
            let concurrency: Int?
            func send(_ delivery: PushDelivery) async -> DeliveryOutcome { .sent }
            func reconcile(_ deliveryKey: DeliveryKey) async -> ReconcileAnswer { .unknown }
            func shutdown() async {}
        }
        let unset = Settings(file: [:], environment: [:])
        #expect(try RuntimeSettings.lanes(unset, sender: Carrying(concurrency: 400)) == 400)
        #expect(try RuntimeSettings.lanes(unset, sender: Carrying(concurrency: nil)) == 64)
        let set = Settings(file: [:], environment: ["HERALD_WORKER_THREADS": "7"])
        #expect(try RuntimeSettings.lanes(set, sender: Carrying(concurrency: 400)) == 7)
    }
}
