/// The release of Herald, printed by `herald --version` and sent in the `User-Agent` of
/// provider requests so that a request can be traced back to a build.
public enum HeraldVersion {
    public static let current = "0.1.0"
}
