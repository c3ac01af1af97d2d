/// How urgently the platform should show a notification (seed 000 requirement 13: unimportant
/// ones may wait in the shade). Maps to APNs priority 10/5 and FCM `HIGH`/`NORMAL`.
public enum NotificationPriority: String, Sendable, Codable, Hashable, CaseIterable {
    case high
    case normal
}
