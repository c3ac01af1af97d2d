/// A benchmark that cannot go on, with the reason.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The bench was stopped by a signal (its name); its queues and devices are then deleted.
struct BenchInterrupted: Error {
    let signal: String
}
