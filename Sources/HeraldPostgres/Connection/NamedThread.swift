import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Starts the dedicated OS threads of HeraldPostgres, named `herald-pg-<n>` (visible in
/// `top -H`, debuggers, and to tests that check no libpq call runs on the cooperative pool).
///
/// Why not `Thread.name`: on Linux, Foundation applies it to the OS thread only sometimes (set
/// before `start()` it is dropped; set after, it races with thread creation). So the thread
/// names itself first thing, through `/proc/thread-self/comm` (glibc's
/// `pthread_setname_np` is not visible to Swift). Linux keeps at most 15 bytes of a name,
/// hence the short form.
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
        let thread = Thread {
            nameCurrentThread(name)
            body()
        }
        thread.start()
        return name
    }

    private static func nameCurrentThread(_ name: String) {
        #if os(Linux)
            let descriptor = open("/proc/thread-self/comm", O_WRONLY)
            guard descriptor >= 0 else { return }
            defer { close(descriptor) }
            var bytes = Array(name.utf8.prefix(15))
            _ = write(descriptor, &bytes, bytes.count)
        #else
            Thread.current.name = name
        #endif
    }
}
