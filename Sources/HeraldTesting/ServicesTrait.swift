import Testing

/// `@Suite(.requires(.rabbitMQ))`: the suite's tests talk to the real services directly, so it
/// runs only when they are there (``TestEnvironment/require(_:)``: cancelled with a note when
/// they are not, failed when `HERALD_TEST_REQUIRE_SERVICES` is set). Tests that go through
/// `TestDatabase.with`, `PrivateStack.start` or a fixture built on them need no trait: those
/// check for themselves.
public struct ServicesTrait: SuiteTrait, TestTrait, TestScoping {
    let services: [TestService]

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await TestEnvironment.require(services)
        try await function()
    }
}

extension Trait where Self == ServicesTrait {
    /// The suite or test needs these services; see ``ServicesTrait``.
    public static func requires(_ services: TestService...) -> Self {
        ServicesTrait(services: services)
    }
}
