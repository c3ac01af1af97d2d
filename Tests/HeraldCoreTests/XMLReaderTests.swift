import Testing

@testable import HeraldCore

@Suite struct XMLReaderTests {
    func parse(_ text: String, depth: Int = 16) throws(XMLReader.SyntaxError) -> XElement {
        try XMLReader.parse(Array(text.utf8), limits: .init(maxDepth: depth))
    }

    @Test func buildsTheTree() throws {
        let root = try parse(
            "<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\r\n<a x='1' y=\"2\">t1<b/>t2<c z='&amp;'>in</c><![CDATA[<raw>]]></a>\n<!-- end -->")
        #expect(root.name == "a")
        #expect(root.attributes == [.init(name: "x", value: "1"), .init(name: "y", value: "2")])
        #expect(root.text == "t1t2<raw>")
        #expect(root.children.map(\.name) == ["b", "c"])
        #expect(root.children[1].attribute("Z") == "&")
        #expect(root.children[1].text == "in")
    }

    @Test func normalisesLineEndsAndAttributeWhitespace() throws {
        let root = try parse("<a v='x\ty\r\nz'>1\r\n2\r3</a>")
        #expect(root.attribute("v") == "x y z")
        #expect(root.text == "1\n2\n3")
    }

    @Test(arguments: [
        "<!DOCTYPE a [<!ENTITY e \"x\">]><a>&e;</a>",
        "<!DOCTYPE a SYSTEM \"file:///etc/passwd\"><a/>",
        "<a>&e;</a>",
        "<a v='&xxe;'/>",
    ])
    func refusesDTDsAndEntities(_ text: String) {
        #expect { try parse(text) } throws: { ($0 as? XMLReader.SyntaxError)?.kind == .forbidden }
    }

    /// The billion-laughs document is refused at its DOCTYPE, before anything expands.
    @Test func billionLaughsIsRefusedImmediately() {
        var doc = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n"
        for k in 1...9 { doc += " <!ENTITY lol\(k) \"" + String(repeating: "&lol\(k == 1 ? "" : String(k - 1));", count: 10) + "\">\n" }
        doc += "]>\n<lolz>&lol9;</lolz>"
        #expect { try parse(doc) } throws: { ($0 as? XMLReader.SyntaxError)?.kind == .forbidden }
    }

    @Test(arguments: [
        "", "text", "<a>", "<a></b>", "</a>", "<a/><b/>", "<a/>x", "x<a/>", "<a b=1/>", "<a b='1'c='2'/>",
        "<a b='<'/>", "<a>&amp</a>", "<a>&#0;</a>", "<a>&#xD800;</a>", "<a>&#1114112;</a>", "<a><!-- x</a>",
        "<a><![CDATA[x</a>", "<1a/>", "<a><?xml version='1.0'?></a>", "<a>\u{0B}</a>", "<a b='1' b='2'/>",
        "<![CDATA[x]]><a/>", "<a", "<a b", "<a b=", "<a b='1'",
    ])
    func rejectsMalformedDocuments(_ text: String) {
        #expect(throws: XMLReader.SyntaxError.self) { try parse(text) }
    }

    @Test func depthAndAttributeLimits() throws {
        let deep = String(repeating: "<a>", count: 16) + String(repeating: "</a>", count: 16)
        #expect(throws: Never.self) { try parse(deep, depth: 16) }
        #expect { try parse("<r>" + deep + "</r>", depth: 16) } throws: { ($0 as? XMLReader.SyntaxError)?.kind == .depth }
        let attributes = (0..<65).map { "a\($0)='1'" }.joined(separator: " ")
        #expect { try parse("<a \(attributes)/>") } throws: { ($0 as? XMLReader.SyntaxError)?.kind == .depth }
    }

    @Test func reportsOpenElements() {
        do {
            _ = try parse("<r><x><y>&bad;</y></x></r>")
            Issue.record("parsed")
        } catch {
            #expect(error.openElements == ["r", "x", "y"])
        }
    }
}
