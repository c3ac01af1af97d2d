import Crypto
import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// `GET`/`PUT /v1/devices/{deviceId}`: what the server knows about a device, as the calling
/// user sees it (seed 003: the app checks whether the server still holds its token). The token
/// itself is never returned: ``tokenFingerprint`` (the first 16 hex digits of its SHA-256) lets
/// the app compare it with the token it has.
struct DeviceResponse: ResponseEncodable, Sendable {
    var deviceId: String
    var app: String?
    var platform: String
    var culture: String
    var hasToken: Bool
    var tokenFingerprint: String?
    var tokenState: String
    var tokenDeadReason: String?
    /// The caller's tags on this device; absent: every tag.
    var tags: [String]?
    /// Tags unsubscribed from while subscribed to every tag.
    var excludedTags: [String]
    var zone: String?
    var branch: String?
    /// The last position used on this device (seed 002); 0 before the first push.
    var lastPosition: Int
    var createdAt: Date
    var updatedAt: Date

    init(device: Device, userId: String) {
        let user = device.users.first { $0.userId == userId }
        deviceId = device.deviceId
        app = device.app
        platform = device.platform.rawValue
        culture = device.culture
        hasToken = device.token != nil
        tokenFingerprint = device.token.map(Self.fingerprint)
        tokenState = device.tokenState.rawValue
        tokenDeadReason = device.tokenState == .dead ? device.tokenDeadReason : nil
        tags = user?.tags.map { $0.sorted() }
        excludedTags = (user?.excludedTags ?? []).sorted()
        zone = user?.zoneId
        branch = user?.branchId
        lastPosition = max(0, device.nextPosition - 1)
        createdAt = device.createdAt
        updatedAt = device.updatedAt
    }

    /// The first 16 hex digits of the token's SHA-256.
    static func fingerprint(_ token: String) -> String {
        String(SHA256.hexDigest(Array(token.utf8)).prefix(16))
    }
}
