import HeraldCore
import HeraldStore

/// The device rules shared by the legacy endpoints and `/v1`, over ``HeraldStore``.
///
/// Who may register on an existing device (docs/api.md "Devices and users"):
/// - a user already subscribed on it: always (token refresh, culture change, new tags);
/// - another user presenting the device's current token (same installation, compared in
///   constant time): added next to the users already there — seed 000's two wallets on one
///   phone get both wallets' pushes;
/// - another user with a different token (or none): the device moves to that user alone, so
///   no one else's pushes ever reach a token they did not register;
/// - `exclusive` (`/v1` only): the device moves to the caller alone in any case (a user
///   switch the app knows about).
///
/// Reads and writes other than the caller's own subscription answer `device_not_found` for a
/// device the caller is not subscribed on, whether it exists or not. Throws ``APIError``.
struct DeviceService: Sendable {
    let store: Store

    /// What a subscribe call changed.
    enum Registered: Sendable {
        case created
        case updated
    }

    @discardableResult
    func register(_ registration: DeviceRegistration, exclusive: Bool) async throws(APIError) -> Registered {
        let existing = try await storeCall { () async throws(StoreError) in try await store.devices.device(id: registration.deviceId, app: registration.app) }
        var replaceOthers = exclusive
        if let existing, !existing.users.isEmpty, !existing.users.contains(where: { $0.userId == registration.userId }) {
            let sameInstallation =
                existing.token.map { stored in
                    ConstantTime.equals(stored, registration.token ?? "")
                } ?? false
            if !sameInstallation { replaceOthers = true }
        }
        let replacing = replaceOthers
        try await storeCall { () async throws(StoreError) in try await store.devices.subscribe(registration, replacingOtherUsers: replacing) }
        return existing == nil ? .created : .updated
    }

    /// Removes the caller's subscription from `tags`, or entirely with no tags. Returns whether
    /// the caller was subscribed on the device.
    @discardableResult
    func unsubscribe(deviceId: String, app: String?, userId: String, tags: Set<String>) async throws(APIError) -> Bool {
        guard try await subscribedDevice(deviceId: deviceId, app: app, userId: userId) != nil else { return false }
        try await storeCall { () async throws(StoreError) in
            try await store.devices.unsubscribe(deviceId: deviceId, app: app, userId: userId, tags: tags)
        }
        return true
    }

    /// The device, if the caller is subscribed on it; otherwise `device_not_found`.
    func device(deviceId: String, app: String?, userId: String) async throws(APIError) -> Device {
        guard let device = try await subscribedDevice(deviceId: deviceId, app: app, userId: userId) else {
            throw APIError(.deviceNotFound, "no device with this id is registered for this user")
        }
        return device
    }

    /// Removes the caller from the device, and the device itself (with its notification log)
    /// when no other user remains on it.
    func delete(deviceId: String, app: String?, userId: String) async throws(APIError) {
        let device = try await device(deviceId: deviceId, app: app, userId: userId)
        try await storeCall { () async throws(StoreError) in
            if device.users.allSatisfy({ $0.userId == userId }) {
                try await store.devices.delete(deviceId: deviceId, app: app)
            } else {
                try await store.devices.unsubscribe(deviceId: deviceId, app: app, userId: userId)
            }
        }
    }

    private func subscribedDevice(deviceId: String, app: String?, userId: String) async throws(APIError) -> Device? {
        let device = try await storeCall { () async throws(StoreError) in try await store.devices.device(id: deviceId, app: app) }
        guard let device, device.users.contains(where: { $0.userId == userId }) else { return nil }
        return device
    }
}

/// Runs a store call, turning a ``StoreError`` into the ``APIError`` a client may see:
/// transient → 503 `store_unavailable`, anything else → 500 `internal_error` (the store's
/// error stays in `underlying`, for the log).
@discardableResult
func storeCall<T>(_ body: () async throws(StoreError) -> T) async throws(APIError) -> T {
    do {
        return try await body()
    } catch {
        if error.isTransient || error.code == .closed {
            throw APIError(.storeUnavailable, "the database is unavailable; try again later", retryAfterSeconds: 5, underlying: error)
        }
        throw APIError(.internalError, "internal error", underlying: error)
    }
}
