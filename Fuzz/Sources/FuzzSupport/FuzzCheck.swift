/// The fuzz targets' one way to report a broken property: a trap, which libFuzzer records as a
/// crash and saves the input for (`crash-<sha1>` next to the run), exactly as it does for a
/// crash of the code under test.
public enum FuzzCheck {
    /// Traps with `message` unless `condition` holds.
    public static func require(
        _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
        file: StaticString = #fileID, line: UInt = #line
    ) {
        if !condition() { fatalError(message(), file: file, line: line) }
    }

    /// libFuzzer's input as an array.
    public static func bytes(_ data: UnsafePointer<UInt8>, _ count: Int) -> [UInt8] {
        Array(UnsafeBufferPointer(start: data, count: count))
    }
}
