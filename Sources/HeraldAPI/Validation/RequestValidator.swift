import HeraldCore

/// The field rules of every endpoint, in one place (docs/api.md "Validation" lists them).
/// Each check throws an ``APIError`` with its own 400 code and returns the normalized value.
struct RequestValidator: Sendable {
    let limits: ValidationLimits

    func platform(_ raw: String, field: String) throws(APIError) -> Platform {
        guard let platform = Platform(name: raw) else {
            throw APIError(.invalidPlatform, "field '\(field)' must be 'ios' or 'android'")
        }
        return platform
    }

    /// `xx-XX`, letters only, any case; returned as `ru-RU`.
    func culture(_ raw: String, field: String = "culture") throws(APIError) -> String {
        let bytes = Array(raw.utf8)
        func isLetter(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
        guard bytes.count == 5, bytes[2] == UInt8(ascii: "-"), isLetter(bytes[0]), isLetter(bytes[1]), isLetter(bytes[3]), isLetter(bytes[4]) else {
            throw APIError(.invalidCulture, "field '\(field)' must be a culture such as 'ru-RU' or 'en-US'")
        }
        return String(decoding: [bytes[0] | 0x20, bytes[1] | 0x20, bytes[2], bytes[3] & ~0x20, bytes[4] & ~0x20], as: UTF8.self)
    }

    /// A provider token, or seed 001's `none` (any case) for "no token", returned as `nil`.
    /// APNs: hexadecimal, even length, 64–200 characters. FCM: `[A-Za-z0-9_:.-]`, 32–4096.
    /// Without a `platform` (Unsubscribe's `os` is optional) a token of either platform will do.
    func pushToken(_ raw: String, platform: Platform?, field: String) throws(APIError) -> String? {
        if raw.lowercased() == "none" { return nil }
        switch platform {
        case .ios?:
            guard Self.isToken(raw, for: .ios) else {
                throw APIError(.invalidPushToken, "field '\(field)' must be an APNs device token (64–200 hexadecimal digits) or 'none'")
            }
        case .android?:
            guard Self.isToken(raw, for: .android) else {
                throw APIError(.invalidPushToken, "field '\(field)' must be an FCM registration token (32–4096 characters of A-Z a-z 0-9 _ : . -) or 'none'")
            }
        case nil:
            guard Platform.allCases.contains(where: { Self.isToken(raw, for: $0) }) else {
                throw APIError(.invalidPushToken, "field '\(field)' must be an APNs device token, an FCM registration token or 'none'")
            }
        }
        return raw
    }

    private static func isToken(_ raw: String, for platform: Platform) -> Bool {
        let bytes = raw.utf8
        switch platform {
        case .ios: return (64...200).contains(bytes.count) && bytes.count % 2 == 0 && bytes.allSatisfy(isHexDigit)
        case .android: return (32...4096).contains(bytes.count) && bytes.allSatisfy(isFCMTokenCharacter)
        }
    }

    /// 1…``ValidationLimits/maxDeviceIdLength`` characters, no control characters.
    func deviceId(_ raw: String) throws(APIError) -> String {
        let scalars = raw.unicodeScalars
        guard !scalars.isEmpty, scalars.count <= limits.maxDeviceIdLength, !scalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw APIError(.invalidDeviceId, "the device id must be 1–\(limits.maxDeviceIdLength) characters without control characters")
        }
        return raw
    }

    /// An app name: like a tag, up to 128 characters; `nil` or empty is the default app.
    func app(_ raw: String?) throws(APIError) -> String? {
        guard let raw, !raw.isEmpty else { return nil }
        guard raw.utf8.count <= 128, raw.utf8.allSatisfy(Self.isTagCharacter) else {
            throw APIError(.invalidParameter, "'app' must be 1–128 characters of A-Z a-z 0-9 _ . : -")
        }
        return raw
    }

    /// At most ``ValidationLimits/maxTags`` tags of 1…``ValidationLimits/maxTagLength``
    /// characters `[A-Za-z0-9_.:-]`.
    func tags(_ raw: [String], field: String = "tags") throws(APIError) -> Set<String> {
        guard raw.count <= limits.maxTags else {
            throw APIError(.invalidTags, "field '\(field)' has more than \(limits.maxTags) tags")
        }
        for tag in raw {
            guard !tag.isEmpty, tag.utf8.count <= limits.maxTagLength, tag.utf8.allSatisfy(Self.isTagCharacter) else {
                throw APIError(.invalidTags, "every tag in '\(field)' must be 1–\(limits.maxTagLength) characters of A-Z a-z 0-9 _ . : -")
            }
        }
        return Set(raw)
    }

    private static func isHexDigit(_ b: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(b | 0x20)
    }

    private static func isAlphanumeric(_ b: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b | 0x20)
    }

    private static func isTagCharacter(_ b: UInt8) -> Bool {
        isAlphanumeric(b) || b == UInt8(ascii: "_") || b == UInt8(ascii: ".") || b == UInt8(ascii: ":") || b == UInt8(ascii: "-")
    }

    private static func isFCMTokenCharacter(_ b: UInt8) -> Bool { isTagCharacter(b) }
}
