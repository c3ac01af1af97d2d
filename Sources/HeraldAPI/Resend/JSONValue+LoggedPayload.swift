import HeraldCore

/// Payloads read back from the notification log, for the missed-notifications listing and
/// resend.
extension JSONValue {
    /// A logged payload as read back from the notification log (written by Herald, so never
    /// deep; anything that is not a JSON object is `nil`).
    init?(logged: String) {
        guard let value = try? JSONValue(parsing: Array(logged.utf8), maxDepth: 64), case .object = value else { return nil }
        self = value
    }

    /// An FCM v1 body (`{"message": {"token": …}}`) with the token replaced, or removed with
    /// `nil`; anything else unchanged.
    func replacingFCMToken(with token: String?) -> JSONValue {
        guard case .object(var root) = self, case .object(var message)? = root["message"] else { return self }
        message["token"] = token.map(JSONValue.string)
        root["message"] = .object(message)
        return .object(root)
    }
}
