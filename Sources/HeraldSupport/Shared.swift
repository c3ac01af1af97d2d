/// A value kept behind one immutable reference, shared by every copy.
///
/// For the structs the hot path copies at each step (a subscription into the audience, the
/// selection, the recipient and the delivery; a rendered notification into each of its
/// deliveries): a copy then costs one retain instead of one per string, array and set the value
/// holds (counted with `scripts/count-calls.sh`: docs/performance.md, "Fewer retains and
/// allocations"). Those types read and write their fields through ``SharedStorage``.
/// A change (rare: the API, the store, the tests) writes a new box, so copies never see it.
/// Equality, hashing and coding are the value's own; equal boxes compare without reading.
@frozen
public struct Shared<Value: Sendable>: Sendable {
    @usableFromInline
    final class Box: Sendable {
        @usableFromInline let value: Value
        @inlinable init(_ value: Value) { self.value = value }
    }

    @usableFromInline var box: Box

    @inlinable
    public init(_ value: Value) { box = Box(value) }

    @inlinable
    public var value: Value {
        get { box.value }
        set { box = Box(newValue) }
    }

    /// One field of the value, read in the box: no copy of the whole value, even unoptimized.
    @inlinable
    public subscript<Field>(field: KeyPath<Value, Field>) -> Field { box.value[keyPath: field] }
}

extension Shared: Equatable where Value: Equatable {
    @inlinable
    public static func == (lhs: Shared, rhs: Shared) -> Bool { lhs.box === rhs.box || lhs.box.value == rhs.box.value }
}

extension Shared: Hashable where Value: Hashable {
    @inlinable
    public func hash(into hasher: inout Hasher) { box.value.hash(into: &hasher) }
}

/// Coded as the value itself, with no wrapper of its own.
extension Shared: Codable where Value: Codable {
    public init(from decoder: any Decoder) throws { self.init(try Value(from: decoder)) }

    public func encode(to encoder: any Encoder) throws { try box.value.encode(to: encoder) }
}
