/// Something the decoder accepted but wants reported, so that nothing is dropped silently: the
/// worker logs notes and counts them in metrics.
public enum DecodingNote: Sendable, Hashable, CustomStringConvertible {
    /// A filter name seed 000 does not define. The filter stays on the event; recipient
    /// selection ignores it.
    case unknownFilter(name: String, field: String)
    /// An element or key the format does not define; it was skipped.
    case ignoredField(field: String)

    public var description: String {
        switch self {
        case .unknownFilter(let name, let field):
            "unknown filter name \(String(reflecting: String(name.prefix(64)))) at \(field) kept but not used for selection"
        case .ignoredField(let field): "unknown field \(field) ignored"
        }
    }
}
