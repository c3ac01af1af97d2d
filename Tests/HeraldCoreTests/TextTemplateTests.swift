import Testing

@testable import HeraldCore

@Suite struct TextTemplateTests {
    @Test func seedExampleRendersPositionally() throws {
        let t = try TextTemplate("Баланс пользователя {0}: {1}")
        #expect(try t.render(["119973638970", "100 ₽"]) == "Баланс пользователя 119973638970: 100 ₽")
        #expect(try t.render(["a", "b", "extra"]) == "Баланс пользователя a: b")
        #expect(t.highestParameterIndex == 1)
    }

    @Test func placeholdersRepeatReorderAndEscape() throws {
        #expect(try TextTemplate("{1}{0}{1}").render(["a", "b"]) == "bab")
        #expect(try TextTemplate("{{0}} = {0}; }} {{").render(["x"]) == "{0} = x; } {")
        #expect(try TextTemplate("{{{0}}}").render(["x"]) == "{x}")
        #expect(try TextTemplate("").render([]) == "")
        #expect(try TextTemplate("plain").render([]) == "plain")
        #expect(try TextTemplate("{10}").render((0...10).map(String.init)) == "10")
    }

    @Test func missingParameterIsAnError() throws {
        let t = try TextTemplate("{0} и {2}")
        do {
            _ = try t.render(["a", "b"])
            Issue.record("rendered")
        } catch {
            #expect(error.code == .missingParameter)
            #expect(error.reason.contains("{2}"))
        }
    }

    @Test(arguments: [
        ("{name}", TemplateError.Code.unknownPlaceholder),
        ("{0:N2}", .unknownPlaceholder),
        ("{0,10}", .unknownPlaceholder),
        ("{}", .unknownPlaceholder),
        ("{ 0}", .unknownPlaceholder),
        ("{-1}", .unknownPlaceholder),
        ("{99999}", .unknownPlaceholder),
        ("{0", .malformedTemplate),
        ("a { b", .malformedTemplate),
        ("{0{1}", .malformedTemplate),
        ("a } b", .malformedTemplate),
        ("}", .malformedTemplate),
    ])
    func badTemplatesAreTypedErrors(_ source: String, _ code: TemplateError.Code) {
        #expect { try TextTemplate(source) } throws: { ($0 as? TemplateError)?.code == code }
    }

    @Test func codableKeepsTheSource() throws {
        let t = try TextTemplate("x {0}")
        #expect(t.description == "x {0}")
        #expect(t == (try TextTemplate("x {0}")))
    }
}
