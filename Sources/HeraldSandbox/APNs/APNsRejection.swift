import Foundation

/// An APNs error answer: the status and Apple's JSON body `{"reason":"…"}` (with `timestamp`,
/// in milliseconds, for 410).
struct APNsRejection: Error, Equatable {
    let status: Int
    let reason: String
    var retryAfter: Int?

    init(_ status: Int, _ reason: String, retryAfter: Int? = nil) {
        self.status = status
        self.reason = reason
        self.retryAfter = retryAfter
    }

    func response(apnsID: String, now: Date) -> ServerResponse {
        var object: [String: Any] = ["reason": reason]
        if status == 410 { object["timestamp"] = Int64(now.timeIntervalSince1970 * 1000) }
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { [UInt8]($0) } ?? []
        var headers: [(name: String, value: String)] = [("apns-id", apnsID)]
        if let retryAfter { headers.append(("retry-after", String(retryAfter))) }
        return .json(body, status: status, headers: headers)
    }
}
