import Foundation
import HeraldCore
import HeraldStore

/// The shape of `herald bench --burst`: `busyUsers` users get `busyPushes` pushes each, published
/// first, then `quietUsers` other users one push each, while the providers (the sandbox) answer
/// after `delay`. The scenario is 1 × 600 then 300 at 30 ms.
struct BurstShape: Sendable, Equatable, Codable {
    var busyUsers = 1
    var busyPushes = 600
    var quietUsers = 300
    var delayMilliseconds = 30.0

    var delay: Duration { .milliseconds(delayMilliseconds) }
    var busyDeliveries: Int { busyUsers * busyPushes }
    var deliveries: Int { busyDeliveries + quietUsers }
    /// A busy user's pushes go out one per round trip (per-user order): its fastest possible
    /// time from first publish to last push sent.
    var floorSeconds: Double { Double(busyPushes) * delayMilliseconds / 1000 }

    /// What is wrong with a shape given on the command line, or nil.
    static func problem(busyUsers: Int, busyPushes: Int, quietUsers: Int, delay: String) -> String? {
        guard busyUsers >= 0, quietUsers >= 0, busyUsers + quietUsers >= 1 else {
            return "--busy-users and --quiet-users must not be negative, and not both 0"
        }
        guard busyPushes >= 1, busyPushes <= 10_000_000 else { return "--busy-pushes must be between 1 and 10,000,000" }
        guard let duration = Settings.parseDuration(delay.trimmingCharacters(in: .whitespaces)), duration >= .zero, duration <= .seconds(60)
        else { return "--burst-delay takes one duration between 0 and 60s, e.g. 30ms" }
        return nil
    }
}

/// The devices and events of a burst run: one device per user, the busy users' iPhone, Android,
/// iPhone… and the quiet users' the same (so that the 1 × 600 burst goes to an iPhone and the
/// 300 quiet users are half iPhones, half Android phones), all in the run's zone. Every event
/// names one user and carries an AMQP message id that says whose push it is and its place in
/// the user's burst (`bench-<run>-busy<b>-<k>`, `bench-<run>-quiet<q>-0`), which the journal
/// keeps as the message's key; the same place is an event parameter (`burst-seq-<k>`), which
/// the payload carries to the sandbox's record (legacy and modern payloads both list the
/// parameters).
struct BurstWorkload: Sendable {
    let runID: String
    let shape: BurstShape
    let eventId: String

    /// The parameter value that carries a push's place in its user's burst.
    static let seqMarker = "burst-seq-"

    var zone: String { "bench-\(runID)-burst" }
    /// What every device id of the run starts with (the check finds them by it).
    var devicePrefix: String { "bench-\(runID)-burst-" }

    enum User: Sendable, Hashable {
        case busy(Int)
        case quiet(Int)
    }

    func userId(_ user: User) -> String {
        switch user {
        case .busy(let b): "bench-\(runID)-busy\(b)"
        case .quiet(let q): "bench-\(runID)-quiet\(q)"
        }
    }

    /// The user's number among all the run's devices: busy users first.
    func deviceIndex(_ user: User) -> Int {
        switch user {
        case .busy(let b): b
        case .quiet(let q): shape.busyUsers + q
        }
    }

    func user(deviceIndex index: Int) -> User { index < shape.busyUsers ? .busy(index) : .quiet(index - shape.busyUsers) }

    func platform(_ user: User) -> Platform {
        switch user {
        case .busy(let n), .quiet(let n): n % 2 == 0 ? .ios : .android
        }
    }

    func deviceId(_ user: User) -> String { devicePrefix + "d\(deviceIndex(user))" }

    func token(_ user: User) -> String {
        platform(user) == .ios ? String(format: "%064x", 3_000_000_000 + deviceIndex(user)) : "bench-\(runID)-burst-fcm-\(deviceIndex(user))"
    }

    var users: [User] { (0..<shape.busyUsers).map(User.busy) + (0..<shape.quietUsers).map(User.quiet) }

    var registrations: [DeviceRegistration] {
        users.map { user in
            DeviceRegistration(
                deviceId: deviceId(user), platform: platform(user), token: token(user), culture: "ru-RU", userId: userId(user), zoneId: zone,
                branchId: nil)
        }
    }

    /// Pushes the user gets in the run.
    func pushes(_ user: User) -> Int {
        switch user {
        case .busy: shape.busyPushes
        case .quiet: 1
        }
    }

    /// The message id of the user's push `k` (its place in the user's pushes, from 0).
    func messageId(_ user: User, _ k: Int) -> String { "\(userId(user))-\(k)" }

    /// The busy users' pushes in publication order: the first busy user's whole burst, then the
    /// next one's… Each burst comes faster than the worker's prefetch window, so that every busy
    /// user has more than `worker.backlog_after` deliveries waiting and the rest is parked (place
    /// by place across 1,000 users, the window would hold at most a few of each user's, and
    /// nothing would be parked).
    func busyEvent(_ index: Int) -> (user: User, k: Int) {
        (.busy(index / shape.busyPushes), index % shape.busyPushes)
    }

    /// The event of the user's push `k`: one user, the run's zone, ru-RU.
    func body(_ user: User, _ k: Int) -> Data {
        let seconds = String(format: "%02d", k / 10_000_000 % 60)
        let fraction = String(format: "%07d", (k * 13 + deviceIndex(user)) % 10_000_000)
        return Data(
            """
            <PushNotification><EventId>\(eventId)</EventId><EventType>Message</EventType>\
            <EventDateTime>2015-04-30T17:32:\(seconds).\(fraction)+03:00</EventDateTime>\
            <EventFilters><Filter name="UserId" value="\(userId(user))" /><Filter name="CultureId" value="ru-RU" />\
            <Filter name="ZoneId" value="\(zone)" /></EventFilters>\
            <EventParams><EventParam name="amount" value="\(k % 1000).00" /><EventParam name="currency" value="RUB" />\
            <EventParam name="n" value="\(Self.seqMarker)\(k)" /></EventParams>\
            </PushNotification>
            """.utf8)
    }
}
