/// Device tokens in logs are shortened: enough to find a device, never the whole token.
enum TokenRedaction {
    static func short(_ token: String) -> String {
        token.count <= 8 ? token : String(token.prefix(8)) + "…"
    }
}
