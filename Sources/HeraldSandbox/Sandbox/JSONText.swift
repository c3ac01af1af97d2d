import Foundation

/// The few pieces of JSON text the recorder writes by hand: strings and RFC 3339 times.
enum JSONText {
    /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped,
    /// everything else as UTF-8.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings (tokens, paths, header values) need no escape: copy them whole.
        if !text.utf8.contains(where: { $0 < 32 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: text.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case 10: out.append(contentsOf: #"\n"#.utf8)
            case 13: out.append(contentsOf: #"\r"#.utf8)
            case 9: out.append(contentsOf: #"\t"#.utf8)
            case 0..<32:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 15)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `2026-11-21T10:00:00.123Z`: UTC, milliseconds (what `ISO8601DateFormatter` writes with
    /// `.withInternetDateTime` and `.withFractionalSeconds`, without its cost per call).
    static func internetTime(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        let whole = (milliseconds / 1000).rounded(.down)
        var seconds = time_t(whole)
        let millis = Int(milliseconds - whole * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }
}
