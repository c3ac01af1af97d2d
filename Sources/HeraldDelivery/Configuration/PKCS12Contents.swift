import SwiftASN1

/// What a PKCS#12 file shows without its password: which kinds of bags lie in its plain
/// sections, and whether it has encrypted ones.
///
/// Why: NIOSSL (2.x) ends the process (`fatalError`) when a bundle opens but BoringSSL finds no
/// private key in it, or no certificate matching the key. Reading the outer structure first lets
/// ``CertificateValidity`` refuse the bundles that would crash with an error naming the file: a
/// certificate exported without its key (the key bag is always in a plain section when there is
/// one: that is how OpenSSL, Keychain Access, Windows and Java write them), and a key without any
/// certificate. A bundle whose key and certificate do not match still reaches NIOSSL (the
/// certificates are encrypted); no export tool writes one.
///
/// RFC 7292: `PFX ::= SEQUENCE { version, authSafe ContentInfo, macData }`; the `authSafe` is
/// `data` holding `AuthenticatedSafe ::= SEQUENCE OF ContentInfo`, each `data` (holding
/// `SafeContents ::= SEQUENCE OF SafeBag`) or `encryptedData`/`envelopedData`.
struct PKCS12Contents {
    /// A `keyBag` or `pkcs8ShroudedKeyBag` in a plain section.
    var hasVisibleKey = false
    /// A `certBag` in a plain section.
    var hasVisibleCertificate = false
    /// Sections whose bags cannot be seen without the password.
    var hasEncryptedSections = false

    struct NotPKCS12: Error {
        var reason: String
    }

    private enum OID {
        static let data: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]
        static let envelopedData: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 3]
        static let encryptedData: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 6]
        static let keyBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 1]
        static let shroudedKeyBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 2]
        static let certBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 3]
        static let safeContentsBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 6]
    }

    /// Reads the structure of `bytes` (BER, as the standard allows; DER is a subset).
    /// - Throws: ``NotPKCS12`` when `bytes` is not a PFX with password integrity.
    init(_ bytes: [UInt8]) throws(NotPKCS12) {
        do {
            let pfx = try Self.elements(of: try BER.parse(bytes), what: "PFX")
            guard pfx.count >= 2 else { throw NotPKCS12(reason: "the PFX has no authSafe") }
            let authSafe = try Self.contentInfo(pfx[1])
            guard authSafe.type == OID.data, let safes = authSafe.content else {
                throw NotPKCS12(reason: "the authSafe is not password-protected data")
            }
            for section in try Self.elements(of: try BER.parse(try Self.octets(safes)), what: "AuthenticatedSafe") {
                let info = try Self.contentInfo(section)
                switch info.type {
                case OID.data:
                    guard let content = info.content else { continue }
                    try readBags(try BER.parse(try Self.octets(content)), depth: 0)
                case OID.encryptedData, OID.envelopedData:
                    hasEncryptedSections = true
                default:
                    throw NotPKCS12(reason: "a section of unknown type \(info.type)")
                }
            }
        } catch let error as NotPKCS12 {
            throw error
        } catch {
            throw NotPKCS12(reason: "not DER/BER (\(error))")
        }
    }

    /// Notes the bags of a `SafeContents`, descending into nested `safeContentsBag`s.
    private mutating func readBags(_ safeContents: ASN1Node, depth: Int) throws {
        guard depth < 8 else { throw NotPKCS12(reason: "safe contents nested too deep") }
        for bag in try Self.elements(of: safeContents, what: "SafeContents") {
            let fields = try Self.elements(of: bag, what: "SafeBag")
            guard let first = fields.first else { throw NotPKCS12(reason: "an empty SafeBag") }
            switch try ASN1ObjectIdentifier(berEncoded: first) {
            case OID.keyBag, OID.shroudedKeyBag: hasVisibleKey = true
            case OID.certBag: hasVisibleCertificate = true
            case OID.safeContentsBag:
                guard fields.count >= 2, let nested = try Self.explicitContent(fields[1]) else { continue }
                try readBags(nested, depth: depth + 1)
            default: continue
            }
        }
    }

    /// `ContentInfo ::= SEQUENCE { contentType OBJECT IDENTIFIER, content [0] EXPLICIT ANY OPTIONAL }`
    private static func contentInfo(_ node: ASN1Node) throws -> (type: ASN1ObjectIdentifier, content: ASN1Node?) {
        let fields = try elements(of: node, what: "ContentInfo")
        guard let first = fields.first else { throw NotPKCS12(reason: "an empty ContentInfo") }
        return (try ASN1ObjectIdentifier(berEncoded: first), fields.count > 1 ? try explicitContent(fields[1]) : nil)
    }

    /// The one element inside an `[0] EXPLICIT` wrapper.
    private static func explicitContent(_ node: ASN1Node) throws -> ASN1Node? {
        guard node.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) else {
            throw NotPKCS12(reason: "expected an explicit [0] tag")
        }
        return try elements(of: node, what: "[0]").first
    }

    private static func elements(of node: ASN1Node, what: String) throws -> [ASN1Node] {
        guard case .constructed(let children) = node.content else { throw NotPKCS12(reason: "the \(what) is not a constructed value") }
        return Array(children)
    }

    private static func octets(_ node: ASN1Node) throws -> [UInt8] {
        Array(try ASN1OctetString(berEncoded: node, withIdentifier: .octetString).bytes)
    }
}
