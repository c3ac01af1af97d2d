/// The NOTIFY channels the schema's triggers use (see `Migrations/0001_initial.sql`).
enum StoreChannel {
    /// Payload: one affected user id, or ``everyone``.
    static let devices = "herald_devices"
    /// Payload: empty.
    static let templates = "herald_templates"
    /// The `herald_devices` payload that invalidates every user.
    static let everyone = "*"
}
