import ArgumentParser
import Foundation
import HTTPTypes
import HeraldCore
import HeraldDelivery
import HeraldHTTP
import HeraldSandbox
import Synchronization

/// `herald sender-bench` (hidden): the APNs and FCM senders alone against a running
/// `herald sandbox`, without broker, database or worker: deliveries per second, the client's
/// CPU per delivery and, when it can be read, the sandbox's. It submits every delivery through
/// ``PushSender/submit(_:completion:)`` (the worker's path), in batches, and lets the senders'
/// in-flight gate bound what is on the wire.
struct SenderBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sender-bench",
        abstract: "Measure the APNs and FCM senders against a running herald sandbox.",
        discussion: """
            Start `herald sandbox --dir DIR` first (same machine). Deliveries alternate iOS and \
            Android (legacy payloads, distinct device tokens). A warm-up opens the connections \
            and fetches the credentials; then the measured run submits every delivery in \
            batches and waits for every outcome. CPU comes from /proc/<pid>/stat (the sandbox \
            writes its pid into DIR/sandbox.json).
            """,
        shouldDisplay: false
    )

    @Option(name: .long, help: "The sandbox's folder (as given to herald sandbox --dir).")
    var sandbox: String = "herald-sandbox"

    @Option(name: .long, help: "Deliveries in the measured run (half iOS, half Android).")
    var deliveries: Int = 50_000

    @Option(name: .long, help: "Most requests in flight per sender (the senders' maxInFlight).")
    var inFlight: Int = 500

    @Option(name: .long, help: "Connections per provider host.")
    var connections: Int = 2

    @Option(name: .long, help: "Deliveries per submit call.")
    var batch: Int = 500

    @Option(name: .long, help: "Deliveries of the warm-up run.")
    var warmUp: Int = 2_000

    @Option(name: .long, help: "Set the sandbox's response delay first, e.g. 30ms (default: leave it as it is).")
    var responseDelay: String?

    @Option(name: .long, help: "Which providers: both (alternating), ios or android.")
    var platforms: String = "both"

    @Flag(name: .long, help: "Measure HeraldHTTP alone: the same number of GET requests to the sandbox's APNs port, --in-flight at once, no sender.")
    var httpOnly = false

    func validate() throws {
        guard ["both", "ios", "android"].contains(platforms) else { throw ValidationError("--platforms must be both, ios or android") }
        guard deliveries >= 1, inFlight >= 1, connections >= 1, batch >= 1, warmUp >= 0 else {
            throw ValidationError("--deliveries, --in-flight, --connections and --batch must be at least 1")
        }
        if let responseDelay, Settings.parseDuration(responseDelay) == nil {
            throw ValidationError("--response-delay must be a duration such as 30ms")
        }
    }

    func run() async throws {
        let manifest: SandboxManifest
        do {
            manifest = try SandboxManifest(directory: URL(fileURLWithPath: sandbox))
        } catch {
            throw ValidationError("\(error): start `herald sandbox --dir \(sandbox)` first")
        }
        let http = HTTPClientConfiguration(maxConnectionsPerHost: connections, tls: .init(caFile: manifest.caPath))
        var apnsConfiguration = APNsConfiguration.token(
            topics: manifest.topics, keyFile: manifest.apnsKeyPath, keyID: manifest.keyID, teamID: manifest.teamID, environment: .sandbox,
            baseURL: manifest.apnsURL, http: http
        )
        apnsConfiguration.maxInFlight = inFlight
        var fcmConfiguration = FCMConfiguration.serviceAccounts([manifest.serviceAccountPath], baseURL: manifest.fcmURL, http: http)
        fcmConfiguration.maxInFlight = inFlight
        let apns = try APNsSender(configuration: apnsConfiguration)
        let fcm = try FCMSender(configuration: fcmConfiguration)
        let sender = RoutingSender(ios: apns, android: fcm)
        defer { Task { await sender.shutdown() } }
        if httpOnly {
            try await runHTTPOnly(manifest: manifest, http: http)
            return
        }

        if let responseDelay, let delay = Settings.parseDuration(responseDelay) {
            try await manifest.setResponseDelay(delay)
        }
        let only: Platform? = platforms == "ios" ? .ios : platforms == "android" ? .android : nil
        let warmUpSet = try Self.deliveries(warmUp, offset: 10_000_000, only: only)
        let measuredSet = try Self.deliveries(deliveries, offset: 0, only: only)
        if !warmUpSet.isEmpty { _ = await Self.submitAll(warmUpSet, to: sender, batch: batch) }

        let clientBefore = ProcessCPU.seconds()
        let sandboxBefore = manifest.pid.flatMap { ProcessCPU.seconds(pid: String($0)) }
        let clock = ContinuousClock()
        let started = clock.now
        let tally = await Self.submitAll(measuredSet, to: sender, batch: batch)
        let elapsed = (clock.now - started).seconds
        let clientCPU = ProcessCPU.seconds().map { $0 - (clientBefore ?? 0) }
        let sandboxCPU = manifest.pid.flatMap { ProcessCPU.seconds(pid: String($0)) }.map { $0 - (sandboxBefore ?? 0) }

        let apnsStatistics = await apns.statistics
        let fcmStatistics = await fcm.statistics
        func perDelivery(_ cpu: Double?) -> String {
            guard let cpu else { return "n/a" }
            return String(format: "%.1f µs/delivery (%.2f cores)", cpu / Double(deliveries) * 1e6, cpu / elapsed)
        }
        let which = only.map { $0 == .ios ? "APNs only" : "FCM only" } ?? "APNs and FCM alternating"
        print(
            "sender-bench: \(deliveries) deliveries (\(which)), in flight ≤ \(inFlight) per sender, \(connections) connection(s) per host, batches of \(batch)")
        print(String(format: "  elapsed          %.2f s", elapsed))
        print(String(format: "  deliveries/s     %.0f", Double(deliveries) / elapsed))
        print("  client CPU       \(perDelivery(clientCPU))")
        print("  sandbox CPU      \(perDelivery(sandboxCPU))")
        print("  outcomes         sent \(tally.sent), token dead \(tally.tokenDead), retry \(tally.retry), failed \(tally.failed)")
        print("  connections      APNs \(apnsStatistics.connectionsOpened), FCM \(fcmStatistics.connectionsOpened) (opened since start)")
        if tally.sent != deliveries {
            print("  first refusal    \(tally.firstRefusal ?? "-")")
        }
    }

    /// HeraldHTTP alone: `deliveries` GET requests (a 404 admin route, no checks, no record),
    /// `inFlight` at once, through `submit`; what the HTTP client and the server cost without
    /// a sender.
    private func runHTTPOnly(manifest: SandboxManifest, http: HTTPClientConfiguration) async throws {
        let client = try HTTPClient(configuration: http)
        defer { Task { await client.shutdown() } }
        let request = HTTPClientRequest(url: manifest.apnsURL + "/_sandbox/bench")
        func run(_ count: Int) async {
            let window = HTTPWindow(total: count, client: client, request: request)
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                window.start(inFlight: inFlight) { continuation.resume() }
            }
        }
        await run(min(warmUp, deliveries))
        let clientBefore = ProcessCPU.seconds()
        let sandboxBefore = manifest.pid.flatMap { ProcessCPU.seconds(pid: String($0)) }
        let clock = ContinuousClock()
        let started = clock.now
        await run(deliveries)
        let elapsed = (clock.now - started).seconds
        let clientCPU = ProcessCPU.seconds().map { $0 - (clientBefore ?? 0) }
        let sandboxCPU = manifest.pid.flatMap { ProcessCPU.seconds(pid: String($0)) }.map { $0 - (sandboxBefore ?? 0) }
        print("sender-bench --http-only: \(deliveries) GET requests, \(inFlight) in flight, \(connections) connection(s)")
        print(String(format: "  requests/s       %.0f", Double(deliveries) / elapsed))
        if let clientCPU { print(String(format: "  client CPU       %.1f µs/request (%.2f cores)", clientCPU / Double(deliveries) * 1e6, clientCPU / elapsed)) }
        if let sandboxCPU {
            print(String(format: "  sandbox CPU      %.1f µs/request (%.2f cores)", sandboxCPU / Double(deliveries) * 1e6, sandboxCPU / elapsed))
        }
    }

    /// `count` deliveries, iOS and Android alternating (or one platform), built by HeraldCore's
    /// payload builder.
    static func deliveries(_ count: Int, offset: Int, only: Platform? = nil) throws -> [PushDelivery] {
        let event = Event(
            id: "TransferIssued", type: .message, dateTime: EventTimestamp(date: Date()),
            params: [EventParameter(name: "Amount", value: "100.00"), EventParameter(name: "Currency", value: "RUB")]
        )
        let metadata = EventMetadata(eventId: event.id, tag: "transfers", priority: .high, sound: "default", isSilent: false, timeToLiveSeconds: 3600)
        let builder = PayloadBuilder(profile: .legacy)
        let now = Date()
        return try (0..<count).map { index in
            let n = index + offset
            let platform: Platform = only ?? (index.isMultiple(of: 2) ? .ios : .android)
            let hex = String(n, radix: 16)
            let token = platform == .ios ? String(repeating: "0", count: 64 - hex.count) + hex : "bench-device:\(n)"
            let target = PushTarget(platform: platform, token: token, userId: "user-\(n)")
            let rendered = RenderedNotification(
                eventId: event.id, culture: "ru-RU", platform: platform, title: "Wallet One", body: "Вам поступил перевод 100.00 RUB",
                metadata: metadata, isSilent: false
            )
            let key = DeliveryKey(messageKey: "bench-\(n)", deviceId: "device-\(n)", userId: "user-\(n)")
            let payload = try builder.build(rendered, event: event, target: target, deliveryKey: key, now: now, position: Int64(n))
            return PushDelivery(
                deliveryKey: key, deviceId: "device-\(n)", userId: "user-\(n)", eventId: event.id, position: Int64(n), target: target, payload: payload)
        }
    }

    /// Submits `deliveries` in batches and returns once every outcome is in.
    static func submitAll(_ deliveries: [PushDelivery], to sender: some PushSender, batch: Int) async -> Tally {
        let counter = OutcomeCounter(expected: deliveries.count)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            counter.onDone = { continuation.resume() }
            var start = 0
            while start < deliveries.count {
                let end = min(deliveries.count, start + batch)
                sender.submit(Array(deliveries[start..<end])) { _, outcome in counter.add(outcome) }
                start = end
            }
        }
        return counter.tally
    }
}

/// Keeps `inFlight` requests going until `total` have completed; the next request starts from
/// the completion of the last, on the client's driver thread.
private final class HTTPWindow: Sendable {
    private let remaining: Mutex<(toStart: Int, toFinish: Int)>
    private let client: HTTPClient
    private let request: HTTPClientRequest
    private let done = Mutex<(@Sendable () -> Void)?>(nil)

    init(total: Int, client: HTTPClient, request: HTTPClientRequest) {
        self.remaining = Mutex((total, total))
        self.client = client
        self.request = request
    }

    func start(inFlight: Int, done: @escaping @Sendable () -> Void) {
        guard remaining.withLock({ $0.toStart }) > 0 else { return done() }
        self.done.withLock { $0 = done }
        for _ in 0..<inFlight { next() }
    }

    private func next() {
        let go = remaining.withLock { state -> Bool in
            guard state.toStart > 0 else { return false }
            state.toStart -= 1
            return true
        }
        guard go else { return }
        client.submit(request) { [self] _ in
            let finished = remaining.withLock { state -> Bool in
                state.toFinish -= 1
                return state.toFinish == 0
            }
            if finished { done.withLock { $0 }?() } else { next() }
        }
    }
}

/// Outcomes of a bench run by kind.
struct Tally: Sendable {
    var sent = 0
    var tokenDead = 0
    var retry = 0
    var failed = 0
    var firstRefusal: String?
}

/// Counts outcomes from the senders' threads and calls `onDone` when the last one arrives.
private final class OutcomeCounter: Sendable {
    private struct State {
        var tally = Tally()
        var remaining: Int
        var onDone: (@Sendable () -> Void)?
    }

    private let state: Mutex<State>

    init(expected: Int) {
        state = Mutex(State(remaining: expected))
    }

    var tally: Tally { state.withLock { $0.tally } }

    var onDone: (@Sendable () -> Void)? {
        get { state.withLock { $0.onDone } }
        set {
            let finished = state.withLock { state -> Bool in
                state.onDone = newValue
                return state.remaining == 0
            }
            if finished { newValue?() }
        }
    }

    func add(_ outcome: DeliveryOutcome) {
        let done = state.withLock { state -> (@Sendable () -> Void)? in
            switch outcome {
            case .sent: state.tally.sent += 1
            case .tokenDead: state.tally.tokenDead += 1
            case .retryAfter: state.tally.retry += 1
            case .permanentFailure: state.tally.failed += 1
            }
            if outcome != .sent, state.tally.firstRefusal == nil { state.tally.firstRefusal = "\(outcome)" }
            state.remaining -= 1
            return state.remaining == 0 ? state.onDone : nil
        }
        done?()
    }
}

extension SandboxManifest {
    /// `PUT /_sandbox/response-delay` on the APNs port (the setting is the sandbox's, both ports).
    func setResponseDelay(_ delay: Duration) async throws {
        let client = try HTTPClient(configuration: HTTPClientConfiguration(tls: .init(caFile: caPath)))
        defer { Task { await client.shutdown() } }
        let milliseconds = Double(delay.components.seconds) * 1000 + Double(delay.components.attoseconds) / 1e15
        let body = Array(#"{"delay_ms":\#(milliseconds)}"#.utf8)
        let response = try await client.execute(
            HTTPClientRequest(method: .put, url: apnsURL + "/_sandbox/response-delay", headerFields: [.contentType: "application/json"], body: body))
        guard response.status.kind == .successful else {
            throw ValidationError("the sandbox refused the response delay: \(response.status.code) \(response.bodyText)")
        }
    }
}
