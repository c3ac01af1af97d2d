import Testing

@testable import HeraldCore

@Suite struct ResxReaderTests {
    static let seedExample = """
        <?xml version="1.0" encoding="utf-8"?>
        <root>
          <xsd:schema id="root" xmlns="" xmlns:xsd="http://www.w3.org/2001/XMLSchema"><xsd:element name="root"/></xsd:schema>
          <resheader name="resmimetype"><value>text/microsoft-resx</value></resheader>
          <data name="balance" xml:space="preserve">
                    <value>Баланс пользователя {0}: {1}</value>
                    </data>
          <data name="Title" xml:space="preserve"><value>Wallet One</value></data>
          <data name="spaces" xml:space="preserve"><value>  a &amp; b
         c  </value><comment>kept as written</comment></data>
        </root>
        """

    @Test func readsTheSeedFormat() throws {
        let entries = try ResxReader.entries(Array(Self.seedExample.utf8), source: "AppleMessages.ru-RU.resx")
        #expect(
            entries == [
                .init(name: "balance", value: "Баланс пользователя {0}: {1}"),
                .init(name: "Title", value: "Wallet One"),
                .init(name: "spaces", value: "  a & b\n c  ", comment: "kept as written"),
            ])
    }

    @Test(arguments: [
        ("<root><data><value>x</value></data></root>", "no name"),
        ("<root><data name='a'></data></root>", "no <value>"),
        ("<root><data name='a'><value>1</value><value>2</value></data></root>", "more than one"),
        ("<root><data name='a'><value>1</value></data><data name='a'><value>2</value></data></root>", "duplicate"),
        ("<root><data name='icon' type='System.Drawing.Bitmap'><value>AAA</value></data></root>", "only string"),
        ("<resources/>", "<root>"),
        ("<!DOCTYPE root [<!ENTITY x 'y'>]><root/>", "not allowed"),
        ("<root><data name='a'><value>x</data></root>", "not closed"),
    ])
    func invalidResourceFiles(_ text: String, _ reasonPart: String) {
        do {
            _ = try ResxReader.entries(Array(text.utf8), source: "f.resx")
            Issue.record("read")
        } catch {
            #expect(error.code == .invalidResource)
            #expect(error.description.contains(reasonPart), "\(error)")
            #expect(error.description.contains("f.resx"))
        }
        #expect(throws: TemplateError.self) { try ResxReader.entries([0x3C, 0xFF], source: "f.resx") }
    }

    @Test func fileNames() throws {
        #expect(try TemplateFileName(parsing: "AndroidMessages.ru-RU.resx") == TemplateFileName(platform: .android, culture: "ru-RU"))
        #expect(try TemplateFileName(parsing: "AppleMessages.en-US.resx") == TemplateFileName(platform: .ios, culture: "en-US"))
        #expect(try TemplateFileName(parsing: "applemessages.ru.RESX") == TemplateFileName(platform: .ios, culture: "ru"))
        #expect(try TemplateFileName(parsing: "AppleMessages.zh-Hans-CN.resx").culture == "zh-Hans-CN")
        #expect(TemplateFileName(platform: .android, culture: "en-US").fileName == "AndroidMessages.en-US.resx")
        for bad in [
            "AppleMessages.resx", "WindowsMessages.ru-RU.resx", "AppleMessages.ru-RU.xml", "AppleMessages.r.resx", "AppleMessages.ru_RU.resx",
            "AppleMessages.ru-.resx", "a.b.c.d",
        ] {
            #expect(throws: TemplateError.self, "\(bad)") { try TemplateFileName(parsing: bad) }
        }
    }

    @Test func bundleConventions() throws {
        let resx = """
            <root>
              <data name="Title"><value>Default title</value></data>
              <data name="A"><value>a {0}</value></data>
              <data name="B.Title"><value>B title</value></data>
              <data name="B"><value>b</value></data>
            </root>
            """
        let templates = try TemplateBundle.templates(
            resx: [TemplateSource(fileName: "AppleMessages.ru-RU.resx", contents: Array(resx.utf8))],
            metadata: [EventMetadata(eventId: "b", tag: "t", priority: .high, isPrivate: true)]
        )
        #expect(templates.map(\.eventId) == ["A", "B"])
        #expect(templates.map(\.title) == ["Default title", "B title"])
        #expect(templates[0].metadata == .defaults(for: "A"))
        #expect(templates[1].metadata.tag == "t")
        #expect(templates[1].metadata.eventId == "B")

        let orphan = "<root><data name='C.Title'><value>x</value></data></root>"
        #expect {
            try TemplateBundle.templates(resx: [TemplateSource(fileName: "AppleMessages.ru-RU.resx", contents: Array(orphan.utf8))], metadata: [])
        } throws: { ($0 as? TemplateError)?.code == .invalidResource }
        let untitled = "<root><data name='C'><value>x</value></data></root>"
        #expect(
            try TemplateBundle.templates(resx: [TemplateSource(fileName: "AppleMessages.ru-RU.resx", contents: Array(untitled.utf8))], metadata: []).map(
                \.title) == [""])
    }
}
