import Foundation
import HeraldWorker

/// Which dead letters `herald dlq replay` takes: every condition that is set must hold.
struct DeadLetterFilter: Sendable {
    /// An error code (`unknown_event`) or a piece of the reason text, in any case.
    var reason: String?
    var eventId: String?
    /// Failed at or after.
    var since: Date?
    /// Failed before.
    var until: Date?

    func matches(_ entry: DeadLetterEntry) -> Bool {
        if let reason {
            let code = entry.code?.lowercased() == reason.lowercased()
            let text = entry.reason?.range(of: reason, options: .caseInsensitive) != nil
            guard code || text else { return false }
        }
        if let eventId, entry.eventId != eventId { return false }
        if since != nil || until != nil {
            guard let failedAt = entry.failedAt else { return false }
            if let since, failedAt < since { return false }
            if let until, failedAt >= until { return false }
        }
        return true
    }
}
