/// One Firebase project Herald sends to, with its service account. A device's `app` selects a
/// project by ``alias`` (the project id unless set).
public struct FCMProject: Sendable, Hashable {
    /// The service-account JSON key file of the project.
    public var serviceAccountFile: String
    /// The name devices use for this project; nil means the file's `project_id`.
    public var alias: String?

    public init(serviceAccountFile: String, alias: String? = nil) {
        self.serviceAccountFile = serviceAccountFile
        self.alias = alias
    }
}
