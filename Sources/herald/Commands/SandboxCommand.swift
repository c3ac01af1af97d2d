import ArgumentParser
import Dispatch
import Foundation
import HeraldSandbox
import Logging

/// `herald sandbox`: runs local stand-ins for APNs and FCM so that a worker can deliver end to
/// end without Apple or Google accounts (the quick start uses it).
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox",
        abstract: "Run local APNs and FCM stand-ins (HTTP/2 over TLS) and write a worker configuration for them.",
        discussion: """
            Both stand-ins listen on 127.0.0.1 with a certificate from a generated CA. They check \
            what Apple and Google check (provider-token signature and age, topic, push type, \
            priority, collapse id, token format, 4096-byte payloads; the OAuth2 assertion, bearer \
            token, message shape, string data values) and answer with the real statuses and \
            error bodies. The folder receives ca.pem, an APNs .p8 key, service-account.json (its \
            token_uri is the sandbox) and herald.yaml; they are reused on the next start. Every \
            accepted push is appended to the record file as a JSON line. Device tokens can be \
            scripted (unregistered, throttled, flaky, delayed) with --rules or the admin endpoint \
            /_sandbox/tokens/<token>. --response-delay answers every push after a fixed delay, as \
            a real provider answers after its round trip (30ms is typical); PUT \
            {"delay_ms": 30} to /_sandbox/response-delay changes it while running.
            """
    )

    @Option(name: .long, help: "Folder for the certificate, keys, service account and herald.yaml.")
    var dir: String = "herald-sandbox"

    @Option(name: .long, help: "APNs stand-in port (0 picks a free one).")
    var apnsPort: Int = 2197

    @Option(name: .long, help: "FCM stand-in and OAuth2 token endpoint port (0 picks a free one).")
    var fcmPort: Int = 2198

    @Option(name: .long, help: "Append accepted pushes as JSON lines to this file (default: <dir>/pushes.jsonl).")
    var record: String?

    @Option(name: .long, help: "Rules file: {\"tokens\": {\"<token>\": {\"unregistered\": true}}}.")
    var rules: String?

    @Option(name: .long, parsing: .upToNextOption, help: "Bundle ids (APNs topics) the sandbox accepts; the first is the default.")
    var topic: [String] = ["com.example.herald"]

    @Option(name: .long, help: "Firebase project id of the generated service account.")
    var project: String = "herald-sandbox"

    @Option(name: .long, help: "Answer every push this long after it arrived, e.g. 30ms (default 0: at once).")
    var responseDelay: String = "0"

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard (0...65535).contains(apnsPort), (0...65535).contains(fcmPort) else { throw ValidationError("ports must be between 0 and 65535") }
        guard !topic.isEmpty else { throw ValidationError("give at least one --topic") }
        guard Settings.parseDuration(responseDelay) != nil else {
            throw ValidationError("--response-delay must be a duration such as 30ms, 1s or 0")
        }
    }

    func run() async throws {
        let settings = try global.settings()
        var logger = Logger(label: "herald.sandbox")
        logger.logLevel = Logger.Level(rawValue: settings.string(.logLevel, default: "info").lowercased()) ?? .info

        let directory = URL(fileURLWithPath: dir, isDirectory: true).standardizedFileURL
        let recordFile = record ?? directory.appendingPathComponent("pushes.jsonl").path
        let configuration = SandboxConfiguration(
            directory: directory, apnsPort: apnsPort, fcmPort: fcmPort, recordFile: recordFile,
            pushesKeptInMemory: 0, rulesFile: rules, topics: topic, projectID: project,
            responseDelay: Settings.parseDuration(responseDelay) ?? .zero
        )
        let sandbox: RunningSandbox
        do {
            sandbox = try await Sandbox.start(configuration, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(1)
        }
        // Written unbuffered, so that a script reading a pipe sees it at once.
        FileHandle.standardOutput.write(Data((sandbox.usage + "\n").utf8))

        let signal = await TerminationSignals.next() ?? "end"
        FileHandle.standardError.write(Data("herald sandbox: \(signal), stopping (\(sandbox.recorder.count) pushes accepted)\n".utf8))
        await sandbox.shutdown()
    }
}
