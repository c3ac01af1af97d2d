import Dispatch
import Foundation
import Synchronization

/// Starts the dedicated OS threads of HeraldPostgres, named `herald-pg-<n>` (visible in
/// `top -H`, debuggers, and to tests that check no libpq call runs on the cooperative pool).
///
/// Why the gate: on Linux, Foundation applies a thread name only when set from outside after
/// `start()` (set before, it is dropped; set from inside right away, it races with
/// `pthread_create` and is sometimes lost). The body waits until the name is applied. Linux
/// keeps at most 15 bytes of a name, hence the short form.
enum NamedThread {
    private static let counter = Mutex(0)

    /// Starts a thread running `body`; returns its name.
    @discardableResult
    static func start(_ body: @escaping @Sendable () -> Void) -> String {
        let number = counter.withLock { counter in
            counter = counter % 99_999 + 1
            return counter
        }
        let name = "herald-pg-\(number)"
        let gate = DispatchSemaphore(value: 0)
        let thread = Thread {
            gate.wait()
            body()
        }
        thread.start()
        thread.name = name
        gate.signal()
        return name
    }
}
