import HeraldCore

/// What the event decoder promises for any input, checked by both event targets.
public enum EventProperties {
    static let decoder = EventDecoder()

    public static func check(_ bytes: [UInt8], contentType: String?) {
        let limits = decoder.limits
        do {
            let decoded = try decoder.decode(bytes, contentType: contentType)
            let event = decoded.event
            FuzzCheck.require(!event.id.isEmpty, "an event without an EventId was accepted")
            FuzzCheck.require(event.id.utf8.count <= limits.maxEventIdBytes, "EventId longer than the limit")
            FuzzCheck.require(event.filters.count <= limits.maxFilters, "more filters than the limit")
            FuzzCheck.require(event.params.count <= limits.maxParams, "more params than the limit")
        } catch {
            FuzzCheck.require(!error.field.isEmpty, "error without a field: \(error.debugDescription)")
            FuzzCheck.require(!error.reason.isEmpty, "error without a reason: \(error.debugDescription)")
        }
    }
}
