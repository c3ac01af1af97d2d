import Foundation

/// What each device of a burst run received, from the sandbox's record (one JSON line per push
/// it accepted, in the order it accepted them): per device, how many, which places
/// (``BurstWorkload/seqMarker``) twice, and which after a later place. A user's pushes must
/// arrive in the order they were published, each once.
struct BurstOrder: Sendable {
    /// One device's pushes as they arrived.
    struct Device: Sendable, Equatable {
        var expected: Int
        var received = 0
        /// Places that arrived again after they had arrived once (user-visible duplicates).
        var duplicates = 0
        /// Places that arrived after a later place of the same device.
        var outOfOrder = 0
        var highest = -1
        /// Bit k: place k arrived.
        var seen: [UInt64]

        init(expected: Int) {
            self.expected = expected
            seen = Array(repeating: 0, count: (expected + 63) / 64)
        }

        var distinct: Int { seen.reduce(0) { $0 + $1.nonzeroBitCount } }
        var missing: Int { expected - distinct }

        mutating func arrived(_ k: Int) {
            received += 1
            guard k >= 0, k < expected else {
                outOfOrder += 1
                return
            }
            let (word, bit) = (k / 64, UInt64(1) << UInt64(k % 64))
            if seen[word] & bit != 0 {
                duplicates += 1
                return
            }
            seen[word] |= bit
            if k < highest { outOfOrder += 1 }
            highest = max(highest, k)
        }
    }

    /// By device index (``BurstWorkload/deviceIndex(_:)``).
    private(set) var devices: [Device]
    private let deviceByToken: [String: Int]
    /// Pushes to a token that is none of the run's, or without a place.
    private(set) var unknown = 0

    init(workload: BurstWorkload) {
        devices = workload.users.map { Device(expected: workload.pushes($0)) }
        var tokens: [String: Int] = [:]
        for user in workload.users { tokens[workload.token(user)] = workload.deviceIndex(user) }
        deviceByToken = tokens
    }

    /// Takes one line of the record.
    mutating func take(line: some Collection<UInt8>) {
        guard let (token, k) = Self.parse(line), let index = deviceByToken[token] else {
            unknown += 1
            return
        }
        devices[index].arrived(k)
    }

    /// Reads the record file `path` a megabyte at a time (a million pushes make a record of
    /// about a gigabyte).
    mutating func read(recordAt path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw BenchError("cannot read the sandbox's record \(path)") }
        defer { try? handle.close() }
        var pending: [UInt8] = []
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            pending.append(contentsOf: chunk)
            var start = pending.startIndex
            while let end = pending[start...].firstIndex(of: 10) {
                take(line: pending[start..<end])
                start = end + 1
            }
            pending.removeSubrange(..<start)
        }
        if !pending.isEmpty { take(line: pending) }
    }

    /// The token (`"token":"…"`) and the place (the digits after ``BurstWorkload/seqMarker``)
    /// of a record line, or nil when it has either not.
    static func parse(_ line: some Collection<UInt8>) -> (token: String, k: Int)? {
        let bytes = Array(line)
        guard let tokenStart = find(Array(#""token":""#.utf8), in: bytes) else { return nil }
        guard let tokenEnd = bytes[tokenStart...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        guard let seqStart = find(Array(BurstWorkload.seqMarker.utf8), in: bytes) else { return nil }
        let digits = bytes[seqStart...].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard !digits.isEmpty, digits.count <= 18, let k = Int(String(decoding: digits, as: UTF8.self)) else { return nil }
        return (String(decoding: bytes[tokenStart..<tokenEnd], as: UTF8.self), k)
    }

    /// The index just after the first occurrence of `needle` in `bytes`.
    private static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard needle.count <= bytes.count else { return nil }
        var index = 0
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0], bytes[index..<index + needle.count].elementsEqual(needle) { return index + needle.count }
            index += 1
        }
        return nil
    }

    /// What the record shows wrong, for the run's differences (empty when every device got its
    /// pushes once each, in order).
    func differences(_ workload: BurstWorkload) -> [String] {
        var out: [String] = []
        let duplicates = devices.reduce(0) { $0 + $1.duplicates }
        let outOfOrder = devices.reduce(0) { $0 + $1.outOfOrder }
        let missing = devices.reduce(0) { $0 + $1.missing }
        func example(_ violates: (Device) -> Bool) -> String {
            guard let index = devices.firstIndex(where: violates) else { return "" }
            return " (e.g. \(workload.userId(workload.user(deviceIndex: index))))"
        }
        if outOfOrder > 0 { out.append("the sandbox accepted \(outOfOrder) pushes after a later one of the same user\(example { $0.outOfOrder > 0 })") }
        if duplicates > 0 { out.append("the sandbox accepted \(duplicates) pushes twice\(example { $0.duplicates > 0 })") }
        if missing > 0 { out.append("\(missing) pushes never reached the sandbox\(example { $0.missing > 0 })") }
        if unknown > 0 { out.append("the sandbox accepted \(unknown) pushes that are none of the run's") }
        return out
    }
}
