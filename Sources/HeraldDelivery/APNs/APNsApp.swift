/// One iOS app Herald sends to: its bundle id (the `apns-topic`) and, for certificate-based
/// authentication, its own certificate. Apps without a certificate use the configuration's
/// token-authentication key, which serves every app of the team.
public struct APNsApp: Sendable, CustomStringConvertible {
    /// The bundle id, sent as `apns-topic`; a device's `app` names it.
    public var topic: String
    /// The app's client certificate, or nil for token authentication.
    public var certificate: APNsCertificate?

    public init(topic: String, certificate: APNsCertificate? = nil) {
        self.topic = topic
        self.certificate = certificate
    }

    public var description: String {
        certificate.map { "\(topic) (certificate \($0))" } ?? "\(topic) (token)"
    }
}
