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

    /// A logged payload with its badge (`aps.badge`, FCM `message.data.badge`) set to `badge`,
    /// where it had one: a push sent again shows today's unread count, not the one it had when
    /// it was first sent. A payload without a badge is unchanged (the legacy profile without
    /// `worker.legacy_badge` stays as logged).
    func replacingBadge(with badge: Int) -> JSONValue {
        guard case .object(var root) = self else { return self }
        if case .object(var aps)? = root["aps"], aps["badge"] != nil {
            aps["badge"] = .int(badge)
            root["aps"] = .object(aps)
        }
        if case .object(var message)? = root["message"], case .object(var data)? = message["data"], data["badge"] != nil {
            data["badge"] = .string(String(badge))
            message["data"] = .object(data)
            root["message"] = .object(message)
        }
        return .object(root)
    }
}
