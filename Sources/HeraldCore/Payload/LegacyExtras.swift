/// What the legacy profile adds to seed 000's shapes, where they have room, with
/// ``PayloadBuilder/legacyExtras`` (the default): keys an app that only knows the seed's format
/// does not read, and one, `aps.sound`, that iOS acts on by itself. One rule for the fast path
/// (``LegacyPayloadWriter``) and the general one, which shortens the body.
///
/// `docs/formats.md` ("Payload keys") says per key which requirement it serves and why it is
/// safe for the apps in the field.
struct LegacyExtras {
    /// APNs `aps.sound`: iOS plays it without the app (requirement 5, incoming money); never
    /// on an event sent as silent (a `System` event or one whose metadata says silent).
    let sound: String?
    /// The target screen (table 2's last column, requirement 9): APNs `aps.acme_screen`, next
    /// to the seed's `acme_*` keys; FCM `data.screen`.
    let screen: String?
    /// FCM `data.channel`: the Android notification channel the app should show the event on
    /// (legacy Android messages are data-only: the app builds the notification itself).
    let channel: String?

    /// Seed 000's exact shapes.
    static let none = LegacyExtras(sound: nil, screen: nil, channel: nil)

    init(sound: String?, screen: String?, channel: String?) {
        self.sound = sound
        self.screen = screen
        self.channel = channel
    }

    init(metadata: EventMetadata, silent: Bool) {
        self.init(sound: silent ? nil : metadata.sound, screen: metadata.targetScreen?.rawValue, channel: metadata.androidChannel)
    }

    /// Room to reserve for what the writer appends for these keys (more only grows the buffer).
    var byteCountBound: Int {
        var bound = 0
        if let sound { bound += 16 + sound.utf8.count }
        if let screen { bound += 24 + screen.utf8.count }
        if let channel { bound += 16 + channel.utf8.count }
        return bound
    }
}
