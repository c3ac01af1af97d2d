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
    /// follows `alert`; with ``LegacyExtras``, `acme_screen` follows `acme_params` and `sound`
    /// comes last.
    static func ios(
        body: String, event: Event, userId: String, badge: Int? = nil, extras: LegacyExtras = .none
    ) -> (bytes: [UInt8], countedSize: Int) {
        var out: [UInt8] = []
        let texts: Int = body.utf8.count + userId.utf8.count + event.id.utf8.count
        out.reserveCapacity(96 + texts + parametersByteCount(event.params) + extras.byteCountBound)
        out.append(literal: #"{"aps":{"acme_eid":"#)
        JSONValue.writeString(event.id, to: &out)
        out.append(literal: #","acme_params":"#)
        writeParameters(event.params, to: &out)
        if let screen = extras.screen {
            out.append(literal: #","acme_screen":"#)
            JSONValue.writeString(screen, to: &out)
        }
        out.append(literal: #","acme_userid":"#)
        JSONValue.writeString(userId, to: &out)
        out.append(literal: #","alert":"#)
        JSONValue.writeString(body, to: &out)
        if let badge {
            out.append(literal: #","badge":"#)
            out.append(contentsOf: String(badge).utf8)
        }
        if let sound = extras.sound {
            out.append(literal: #","sound":"#)
            JSONValue.writeString(sound, to: &out)
        }
        out.append(literal: "}}")
        return (out, out.count)
    }

    /// `{"message":{"android":{…},"data":{"eid":…,"msg":…,"params":"[…]","userid":…},"token":…}}`;
    /// the limit counts the `data` object only (FCM's 4 KB is on the data payload). With a
    /// `badge`, `data` starts with `"badge":"N"` (FCM data values are strings); with
    /// ``LegacyExtras``, `data` has `channel` before `eid` and `screen` before `userid`.
    static func android(
        body: String, event: Event, userId: String, token: String, android: AndroidOptions, badge: Int? = nil, extras: LegacyExtras = .none
    ) -> (bytes: [UInt8], countedSize: Int) {
        var params: [UInt8] = []
        params.reserveCapacity(parametersByteCount(event.params))
        writeParameters(event.params, to: &params)
        var out: [UInt8] = []
        let texts: Int = event.id.utf8.count + body.utf8.count + userId.utf8.count + token.utf8.count
        let options: Int = android.byteCountBound + extras.byteCountBound
        out.reserveCapacity(128 + texts + options + params.count * 2)
        out.append(literal: #"{"message":{"android":{"#)
        android.write(to: &out)
        out.append(literal: #"},"data":{"#)
        let dataStart = out.count - 1
        if let badge {
            out.append(literal: #""badge":""#)
            out.append(contentsOf: String(badge).utf8)
            out.append(literal: #"","#)
        }
        if let channel = extras.channel {
            out.append(literal: #""channel":"#)
            JSONValue.writeString(channel, to: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append(literal: #""eid":"#)
        JSONValue.writeString(event.id, to: &out)
        out.append(literal: #","msg":"#)
        JSONValue.writeString(body, to: &out)
        out.append(literal: #","params":"#)
        JSONValue.writeString(utf8: params, to: &out)
        if let screen = extras.screen {
            out.append(literal: #","screen":"#)
            JSONValue.writeString(screen, to: &out)
        }
        out.append(literal: #","userid":"#)
        JSONValue.writeString(userId, to: &out)
        out.append(UInt8(ascii: "}"))
        let dataSize = out.count - dataStart
        out.append(literal: #","token":"#)
        JSONValue.writeString(token, to: &out)
        out.append(literal: "}}")
        return (out, dataSize)
    }

    /// Room to reserve for what ``writeParameters(_:to:)`` writes (exactly that when nothing in
    /// them needs escaping), so that the buffer does not grow (and copy) on the way.
    static func parametersByteCount(_ params: [EventParameter]) -> Int {
        // Read in place, by index: `reduce` over the elements would copy each one out.
        params.withUnsafeBufferPointer { params in
            params.indices.reduce(2) { $0 + 24 + params[$1].name.utf8.count + params[$1].value.utf8.count }
        }
    }

    /// `[{"name":…,"value":…},…]`.
    static func writeParameters(_ params: [EventParameter], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        // Read in place: a loop over the array would copy each parameter's strings out.
        params.withUnsafeBufferPointer { params in
            for index in params.indices {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.append(literal: #"{"name":"#)
                JSONValue.writeString(params[index].name, to: &out)
                out.append(literal: #","value":"#)
                JSONValue.writeString(params[index].value, to: &out)
                out.append(UInt8(ascii: "}"))
            }
        }
        out.append(UInt8(ascii: "]"))
    }
}

extension [UInt8] {
    /// A literal's bytes, copied from the binary: no `String` to make or to retain.
    mutating func append(literal: StaticString) {
        literal.withUTF8Buffer { append(contentsOf: $0) }
    }
}
