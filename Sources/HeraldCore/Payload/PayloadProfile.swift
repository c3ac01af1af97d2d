/// Which payload shapes to send.
public enum PayloadProfile: String, Sendable, Codable, Hashable, CaseIterable {
    /// Seed 000's shapes, for the apps already in the field: Android FCM data `msg`, `eid`,
    /// `userid`, `params`; Apple `aps.alert` with `acme_eid`, `acme_userid`, `acme_params` inside
    /// `aps`; plus the keys those apps can ignore (``PayloadBuilder/legacyExtras``: sound,
    /// screen, Android channel). Metadata's private and silent flags do not change these shapes.
    case legacy
    /// Title/body alerts, sound, badge, thread-id, category, mutable-content, background pushes
    /// for silent events, custom keys outside `aps`; FCM notification or data-only messages.
    case modern
}
