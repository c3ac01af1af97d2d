/// The seed 000 payload shapes written straight into bytes: the hot path of ``PayloadBuilder``
/// for the legacy profile (the default), one buffer per delivery instead of a tree of
/// ``JSONValue``s serialized twice.
///
/// The bytes are exactly those of the canonical serialization of the same values (keys in
/// UTF-8 byte order, the same string escaping): `PayloadBuilderTests` compares the two for
/// every shape. When a payload is over its limit the builder falls back to the general path,
/// which shortens the body.
enum LegacyPayloadWriter {
    /// `{"aps":{"acme_eid":…,"acme_params":[{"name":…,"value":…}],"acme_userid":…,"alert":…}}`;
    /// the limit counts the whole body. With a `badge` (``PayloadBuilder/legacyBadge``), `"badge":N`
    /// follows `alert`.
    static func ios(body: String, event: Event, userId: String, badge: Int? = nil) -> (bytes: [UInt8], countedSize: Int) {
        var out: [UInt8] = []
        out.reserveCapacity(96 + body.utf8.count + userId.utf8.count + event.id.utf8.count + event.params.count * 40)
        out.append(contentsOf: #"{"aps":{"acme_eid":"#.utf8)
        JSONValue.writeString(event.id, to: &out)
        out.append(contentsOf: #","acme_params":"#.utf8)
        writeParameters(event.params, to: &out)
        out.append(contentsOf: #","acme_userid":"#.utf8)
        JSONValue.writeString(userId, to: &out)
        out.append(contentsOf: #","alert":"#.utf8)
        JSONValue.writeString(body, to: &out)
        if let badge {
            out.append(contentsOf: #","badge":"#.utf8)
            out.append(contentsOf: String(badge).utf8)
        }
        out.append(contentsOf: "}}".utf8)
        return (out, out.count)
    }

    /// `{"message":{"android":{…},"data":{"eid":…,"msg":…,"params":"[…]","userid":…},"token":…}}`;
    /// the limit counts the `data` object only (FCM's 4 KB is on the data payload). With a
    /// `badge`, `data` starts with `"badge":"N"` (FCM data values are strings).
    static func android(
        body: String, event: Event, userId: String, token: String, android: [(key: String, value: String)], badge: Int? = nil
    ) -> (bytes: [UInt8], countedSize: Int) {
        var params: [UInt8] = []
        writeParameters(event.params, to: &params)
        var out: [UInt8] = []
        out.reserveCapacity(160 + body.utf8.count + userId.utf8.count + token.utf8.count + params.count * 2)
        out.append(contentsOf: #"{"message":{"android":{"#.utf8)
        for (index, member) in android.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONValue.writeString(member.key, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONValue.writeString(member.value, to: &out)
        }
        out.append(contentsOf: #"},"data":"#.utf8)
        let dataStart = out.count
        if let badge {
            out.append(contentsOf: #"{"badge":""#.utf8)
            out.append(contentsOf: String(badge).utf8)
            out.append(contentsOf: #"","eid":"#.utf8)
        } else {
            out.append(contentsOf: #"{"eid":"#.utf8)
        }
        JSONValue.writeString(event.id, to: &out)
        out.append(contentsOf: #","msg":"#.utf8)
        JSONValue.writeString(body, to: &out)
        out.append(contentsOf: #","params":"#.utf8)
        JSONValue.writeString(String(decoding: params, as: UTF8.self), to: &out)
        out.append(contentsOf: #","userid":"#.utf8)
        JSONValue.writeString(userId, to: &out)
        out.append(UInt8(ascii: "}"))
        let dataSize = out.count - dataStart
        out.append(contentsOf: #","token":"#.utf8)
        JSONValue.writeString(token, to: &out)
        out.append(contentsOf: "}}".utf8)
        return (out, dataSize)
    }

    /// `[{"name":…,"value":…},…]`.
    static func writeParameters(_ params: [EventParameter], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (index, param) in params.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"name":"#.utf8)
            JSONValue.writeString(param.name, to: &out)
            out.append(contentsOf: #","value":"#.utf8)
            JSONValue.writeString(param.value, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
    }
}
