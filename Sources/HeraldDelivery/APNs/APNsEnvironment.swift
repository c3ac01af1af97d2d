/// Which APNs servers to use: the production service, or the development ("sandbox") service
/// that apps built with a development provisioning profile register with.
public enum APNsEnvironment: String, Sendable, Hashable, CaseIterable {
    case production
    case sandbox

    /// `https://api.push.apple.com` or `https://api.sandbox.push.apple.com` (port 443).
    public var baseURL: String {
        switch self {
        case .production: "https://api.push.apple.com"
        case .sandbox: "https://api.sandbox.push.apple.com"
        }
    }
}
