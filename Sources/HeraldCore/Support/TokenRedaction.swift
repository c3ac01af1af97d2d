/// Device tokens in logs and support answers are shortened: enough to find a device, never the
/// whole token.
public enum TokenRedaction {
    public static func short(_ token: String) -> String {
        token.count <= 8 ? token : String(token.prefix(8)) + "…"
    }
}
