/// A struct whose fields live in one ``Shared`` box and read as its own properties.
///
/// The conforming type declares its fields once, in `Fields` (where their doc comments live), and
/// keeps them in ``storage``: `value.field` and `value.field = x` reach them through the
/// subscripts below, so no type writes a forwarding accessor per field by hand. A property that
/// computes something is still written on the type itself, and wins over a field of the same name.
///
/// The subscripts are inlined: with the constant key path of a member access, the optimizer
/// reduces them to a direct read or write of the field in the box, as a hand-written accessor
/// would be (docs/performance.md, "The shared storage").
@dynamicMemberLookup
public protocol SharedStorage {
    /// The stored fields: their names, types and coded keys are the conforming type's.
    associatedtype Fields: Sendable

    /// The box every copy shares. Public only because the inlined subscripts read it; use the
    /// fields.
    var storage: Shared<Fields> { get set }
}

extension SharedStorage {
    /// A field that cannot be written (a `let`, or one internal to the conforming module).
    @inlinable
    public subscript<Field>(dynamicMember field: KeyPath<Fields, Field>) -> Field {
        storage[field]
    }

    /// A field, read from the shared box; a write puts a new box in place, so copies never see it.
    @inlinable
    public subscript<Field>(dynamicMember field: WritableKeyPath<Fields, Field>) -> Field {
        get { storage[field] }
        set { storage.value[keyPath: field] = newValue }
    }
}
