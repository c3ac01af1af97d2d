import Foundation
import Synchronization

/// Publish→sent latencies in log-spaced buckets (2 % wide, from 10 µs to beyond an hour), so
/// that percentiles cost constant memory however many deliveries are measured. Thread-safe.
final class LatencyHistogram: Sendable {
    private static let growth = 1.02
    private static let smallestMicroseconds = 10.0
    private static let bucketCount = 1_100

    private struct State {
        var buckets = [Int](repeating: 0, count: LatencyHistogram.bucketCount)
        var count = 0
    }

    private let state = Mutex(State())

    func record(_ latency: Duration) {
        let index = Self.bucket(for: latency)
        state.withLock { state in
            state.buckets[index] += 1
            state.count += 1
        }
    }

    /// Records many at once (one lock).
    func record(_ latencies: [Duration]) {
        let indices = latencies.map(Self.bucket(for:))
        state.withLock { state in
            for index in indices { state.buckets[index] += 1 }
            state.count += indices.count
        }
    }

    var count: Int { state.withLock { $0.count } }

    /// The latency at or below which `fraction` (0…1) of the samples fall (the upper edge of
    /// the bucket holding that rank), or nil without samples.
    func percentile(_ fraction: Double) -> Duration? {
        state.withLock { state in
            guard state.count > 0 else { return nil }
            let rank = max(1, Int((Double(state.count) * fraction).rounded(.up)))
            var seen = 0
            for (index, n) in state.buckets.enumerated() {
                seen += n
                if seen >= rank { return Self.upperEdge(of: index) }
            }
            return Self.upperEdge(of: Self.bucketCount - 1)
        }
    }

    /// Every non-empty bucket, by its upper edge, in order (for plots).
    var distribution: [(upTo: Duration, count: Int)] {
        state.withLock { state in
            state.buckets.enumerated().compactMap { $0.element > 0 ? (Self.upperEdge(of: $0.offset), $0.element) : nil }
        }
    }

    static func bucket(for latency: Duration) -> Int {
        let (seconds, attoseconds) = latency.components
        let micros = Double(seconds) * 1e6 + Double(attoseconds) / 1e12
        guard micros > smallestMicroseconds else { return 0 }
        let index = Int((log(micros / smallestMicroseconds) / log(growth)).rounded(.up))
        return min(max(index, 0), bucketCount - 1)
    }

    static func upperEdge(of index: Int) -> Duration {
        .microseconds(Int64(smallestMicroseconds * pow(growth, Double(index))))
    }
}
