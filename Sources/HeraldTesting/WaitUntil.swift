/// A condition a test waited for did not come true in time.
public struct TimeoutError: Error, CustomStringConvertible {
    public let what: String
    public init(what: String) { self.what = what }
    public var description: String { "timed out waiting for \(what)" }
}

/// The test environment is not what the tests need (a service unreachable, a fixture failing).
public struct TestEnvironmentError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes (then throws): the one way
/// tests wait for something asynchronous, so that no wait is unbounded.
public func waitUntil(
    _ what: String, timeout: Duration, _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return }
        if ContinuousClock.now >= deadline { throw TimeoutError(what: what) }
        try await Task.sleep(for: .milliseconds(20))
    }
}
