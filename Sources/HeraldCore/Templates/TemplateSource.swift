/// One template file's name and bytes, as read by whoever does the I/O (`herald preview`,
/// `herald templates import`); HeraldCore itself never touches the file system.
public struct TemplateSource: Sendable, Hashable {
    public var fileName: String
    public var contents: [UInt8]

    public init(fileName: String, contents: [UInt8]) {
        self.fileName = fileName
        self.contents = contents
    }
}
