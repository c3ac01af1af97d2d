internal import CRabbitMQ
import Glibc

/// Owned C memory for values librabbitmq reads during one call: `amqp_bytes_t` strings, header
/// tables, property structs. A Swift `String` bridged to `char *` lives only for the call that
/// bridges it, and librabbitmq's structs keep raw pointers, so everything is copied here and freed
/// together by ``reset()`` once the call returned (or when the arena goes away).
///
/// Thread rule: used only by the connection thread that owns it.
final class CArena {
    private var allocations: [UnsafeMutableRawPointer] = []

    init() {
        allocations.reserveCapacity(32)
    }

    deinit {
        reset()
    }

    /// Frees everything allocated since the last reset.
    func reset() {
        for pointer in allocations { free(pointer) }
        allocations.removeAll(keepingCapacity: true)
    }

    /// A copy of the string's UTF-8 bytes (not NUL-terminated; AMQP strings carry a length).
    func bytes(_ string: String) -> amqp_bytes_t {
        var copy = string
        return copy.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
    }

    func bytes(_ raw: UnsafeRawBufferPointer) -> amqp_bytes_t {
        guard let base = raw.baseAddress, raw.count > 0 else { return amqp_bytes_t(len: 0, bytes: nil) }
        let pointer = allocate(byteCount: raw.count)
        pointer.copyMemory(from: base, byteCount: raw.count)
        return amqp_bytes_t(len: raw.count, bytes: pointer)
    }

    func bytes(_ array: [UInt8]) -> amqp_bytes_t {
        array.withUnsafeBytes { bytes($0) }
    }

    /// A NUL-terminated copy, for the few calls that take `const char *`.
    func cString(_ string: String) -> UnsafePointer<CChar> {
        let utf8 = Array(string.utf8)
        let pointer = allocate(byteCount: utf8.count + 1)
        utf8.withUnsafeBytes { pointer.copyMemory(from: $0.baseAddress!, byteCount: utf8.count) }
        pointer.storeBytes(of: 0, toByteOffset: utf8.count, as: UInt8.self)
        return UnsafePointer(pointer.assumingMemoryBound(to: CChar.self))
    }

    /// Uninitialised storage for `count` values of a trivial C type; the caller initialises it.
    func array<T>(of type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        let pointer = allocate(byteCount: max(1, count) * MemoryLayout<T>.stride)
        return pointer.bindMemory(to: T.self, capacity: max(1, count))
    }

    private func allocate(byteCount: Int) -> UnsafeMutableRawPointer {
        guard let pointer = malloc(byteCount) else {
            // Out of memory: nothing sensible can continue; this is not a runtime condition we can
            // report through the AMQP error path.
            preconditionFailure("malloc(\(byteCount)) failed")
        }
        allocations.append(pointer)
        return pointer
    }
}
