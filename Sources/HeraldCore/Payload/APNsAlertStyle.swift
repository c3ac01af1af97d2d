/// How the modern APNs alert carries its text.
public enum APNsAlertStyle: String, Sendable, Codable, Hashable {
    /// `alert.title` and `alert.body`: the text rendered by Herald.
    case text
    /// `alert.title` plus `alert.loc-key` (the event id) and `alert.loc-args` (the parameters):
    /// the app localizes the body itself and no rendered body travels.
    case localizationKey
}
