import Foundation
import HeraldCore
import HeraldStore

/// The benchmark's devices and events: `users` users with one device each (iOS and Android
/// alternating, ru-RU), all in the run's own zone; the first `broadcastDevices` ×
/// `broadcastGroups` also in one of the run's broadcast branches, `broadcastDevices` in each.
/// Events are a mix of single-user, three-user and broadcast events (a broadcast is filtered to
/// the run's zone and to one branch, so that it reaches `broadcastDevices` devices whatever else
/// the database holds). Bodies are seed 000 XML, unique by timestamp.
///
/// The workload of record sends every broadcast to the first group. Each of its devices then
/// gets a push in one event of 20, and per-user order gives a user one push in flight at a
/// time: when a push takes a round trip `t`, a run cannot pass 20 ÷ `t` events a second
/// (``perUserOrderBound(roundTrip:spread:)``). A spread run's broadcasts take turns on the
/// groups instead, so that a provider's round trip bounds each user `broadcastGroups` times
/// less.
struct BenchWorkload: Sendable {
    let runID: String
    let users: Int
    let broadcastDevices: Int
    var broadcastGroups = 1
    let eventId: String
    /// Percent of events that are three-user and broadcast events (the rest are single-user).
    let multiUserPercent = 15
    let broadcastPercent = 5

    var zone: String { "bench-\(runID)" }
    /// The branch of the broadcast group `group`.
    func branch(_ group: Int) -> String { group == 0 ? "bench-\(runID)-b" : "bench-\(runID)-b\(group)" }
    /// The branch of the devices of the large broadcast (`herald bench --broadcast`).
    var broadcastBranch: String { "bench-\(runID)-bb" }

    func userId(_ n: Int) -> String { "bench-\(runID)-u\(n)" }

    var registrations: [DeviceRegistration] {
        (0..<users).map { n in
            let ios = n % 2 == 0
            let token = ios ? String(format: "%064x", n) : "bench-\(runID)-fcm-\(n)"
            return DeviceRegistration(
                deviceId: "bench-\(runID)-d\(n)", platform: ios ? .ios : .android, token: token, culture: "ru-RU", userId: userId(n),
                zoneId: zone, branchId: n < broadcastDevices * broadcastGroups ? branch(n / broadcastDevices) : nil
            )
        }
    }

    /// Deliveries the event `index` makes when its users differ: the workload's nominal count.
    func nominalDeliveries(_ index: Int) -> Int {
        switch kind(index) {
        case .single: 1
        case .multi: 3
        case .broadcast: broadcastDevices
        }
    }

    /// Deliveries the event `index` of a run salted `salt` makes: one per user it names (one
    /// device each) or `broadcastDevices`. A three-user event draws its users at random and
    /// now and then draws one twice: it then reaches two users, not three (about four events in
    /// 100,000, which is why rounds of 100,000 events made a few deliveries fewer than 225,000).
    func deliveries(_ index: Int, salt: Int) -> Int {
        kind(index) == .broadcast ? broadcastDevices : Set(recipients(index, salt: salt)).count
    }

    /// The deliveries `count` events of a run salted `salt` make, by the journal key of each
    /// event's message (a body without a message id: the SHA-256 of the body). Events of one
    /// run have different bodies (their numbers and timestamps differ).
    func expectedDeliveries(count: Int, salt: Int, spread: Bool = false) -> [UUID: Int] {
        var expected: [UUID: Int] = [:]
        expected.reserveCapacity(count)
        for index in 0..<count {
            let key = MessageKey(text: DeliveryKey.messageKey(forBody: body(index, salt: salt, spread: spread)))
            expected[key.digest] = deliveries(index, salt: salt)
        }
        return expected
    }

    /// The users (numbers) the event `index` names, in the order its filters name them: none
    /// for a broadcast.
    func recipients(_ index: Int, salt: Int) -> [Int] {
        var rng = SplitMix(seed: UInt64(index &* 7919 &+ salt))
        switch kind(index) {
        case .single: return [Int(rng.next() % UInt64(users))]
        case .multi: return (0..<3).map { _ in Int(rng.next() % UInt64(users)) }
        case .broadcast: return []
        }
    }

    enum Kind { case single, multi, broadcast }

    /// The most events a second that per-user order allows when each push takes `roundTrip`
    /// (nil for no round trip): a broadcast device gets one push in `100 ÷ broadcastPercent`
    /// events (times the groups when `spread`) and has at most one in flight.
    func perUserOrderBound(roundTrip: Duration, spread: Bool) -> Double? {
        guard roundTrip > .zero else { return nil }
        return Double(100 / broadcastPercent * (spread ? broadcastGroups : 1)) / roundTrip.seconds
    }

    func kind(_ index: Int) -> Kind {
        let bucket = index % 100
        if bucket < broadcastPercent { return .broadcast }
        if bucket < broadcastPercent + multiUserPercent { return .multi }
        return .single
    }

    /// The body of event `index` of a run (`salt` keeps bodies of different runs apart); with
    /// `spread`, broadcasts take turns on the groups.
    func body(_ index: Int, salt: Int, spread: Bool = false) -> Data {
        var filters = ""
        if kind(index) == .broadcast {
            let group = spread ? (index / 100 * broadcastPercent + index % 100) % broadcastGroups : 0
            filters = #"<Filter name="UserId" value="0" /><Filter name="BranchId" value="\#(branch(group))" />"#
        } else {
            for user in recipients(index, salt: salt) { filters += #"<Filter name="UserId" value="\#(userId(user))" />"# }
        }
        filters += #"<Filter name="CultureId" value="ru-RU" /><Filter name="ZoneId" value="\#(zone)" />"#
        let fraction = String(format: "%07d", (index * 13 + salt) % 10_000_000)
        let seconds = String(format: "%02d", index / 10_000_000 % 60)
        return Data(
            """
            <PushNotification><EventId>\(eventId)</EventId><EventType>Message</EventType>\
            <EventDateTime>2015-04-30T17:32:\(seconds).\(fraction)+03:00</EventDateTime>\
            <EventFilters>\(filters)</EventFilters>\
            <EventParams><EventParam name="amount" value="\(index % 1000).00" /><EventParam name="currency" value="RUB" /><EventParam name="n" value="\(index)" /></EventParams>\
            </PushNotification>
            """.utf8)
    }

    /// One broadcast event to every device of ``broadcastBranch``.
    func broadcastBody(salt: Int) -> Data {
        Data(
            """
            <PushNotification><EventId>\(eventId)</EventId><EventType>Message</EventType>\
            <EventDateTime>2015-04-30T17:32:00.\(String(format: "%07d", salt % 10_000_000))+03:00</EventDateTime>\
            <EventFilters><Filter name="UserId" value="0" /><Filter name="BranchId" value="\(broadcastBranch)" /></EventFilters>\
            <EventParams><EventParam name="amount" value="1.00" /><EventParam name="currency" value="RUB" /><EventParam name="n" value="0" /></EventParams>\
            </PushNotification>
            """.utf8)
    }

    /// A tiny deterministic generator, so that a run can be repeated exactly.
    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
