/// Whether a device's token still works.
public enum TokenState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case active
    /// The provider said the token will never work again; the device receives nothing until
    /// the app sends a token again.
    case dead

    public var description: String { rawValue }
}
