import Foundation
import Testing

@testable import ChimeConfig

/// The syntax check that keeps broken TOML away from toml++, which aborts on some of it: every such
/// text is an error with its line, and valid TOML passes untouched.
@Suite struct TOMLSyntaxCheckTests {
    /// Each of these made toml++ abort (found by scripts/fuzz.sh), or is a close relative.
    @Test(arguments: [
        ("[é]", 1), ("[=]", 1), ("[.flood]", 1), ("[#]", 1), ("a = 1\n[+x]", 2), ("[ é]", 1), ("[[é]]", 1),
        ("[[ é]]", 1), ("[[ [", 1), ("[\n]", 1), ("\u{FEFF}[é]", 1), ("x = \"\"\"\n[a]\n\"\"\"\n[é]", 4),
        ("   [🎉]", 1), ("i=[\"\",}", 1), ("a = [1,,2]", 1), ("a = [,]", 1), ("a = { b = 1, }", 1), ("a = ]", 1),
        ("a = }", 1), ("a = #", 1), ("a = \n", 1), ("a = [\n1\n2]", 3), ("a = 1\nb = [\"x\" \"y\"]", 2),
        ("a = 0x", 1), ("a = 1__0", 1), ("a = 01", 1), ("a = 1.", 1), ("a = 1e", 1), ("a = +inf1", 1),
        ("a = True", 1), ("a = 1979-05-27T07:32", 1), ("a = 07:32", 1), ("a = \"\\q\"", 1), ("a = \"\\uD800\"", 1),
        ("a = \"x\ny\"", 1), ("a = '''x", 1), ("a = 1 b = 2", 1), ("a.= 1", 1), ("= 1", 1), ("a = 1\r", 1),
        ("[a] b = 1", 1), ("a = {\nb = 1}", 1), ("a = \"\u{01}\"", 1),
    ])
    func brokenSyntaxIsAnErrorWithItsLine(text: String, line: Int) {
        let failure = TOMLSyntaxCheck.firstError(in: text)
        #expect(failure?.line == line, "\(text.debugDescription): \(failure?.reason ?? "accepted")")
        #expect {
            try DaemonSettings.parse(text, file: "c.toml")
        } throws: { error in
            (error as? ConfigError)?.line == line
        }
    }

    @Test func aBadHeaderSaysWhatItFound() {
        #expect(
            TOMLSyntaxCheck.firstError(in: "[log]\n[é]")
                == .init(line: 2, reason: "expected a key: letters, digits, _ and -, or a quoted name, found \"é\""))
        #expect(
            TOMLSyntaxCheck.firstError(in: "i = [\"\",}")
                == .init(line: 1, reason: "expected a value, found \"}\""))
    }

    /// Valid TOML 1.0, including the corners the check must follow.
    @Test(arguments: [
        "", "\n\n", "# only a comment", "\u{FEFF}a = 1", "a = 1\r\nb = 2\r\n", "[flood]\nrate = 5",
        "[[entry]]\nid = \"a\"",
        "[ \"é\" ]", "['é']", "[a . \"é\"]", "[ a ]\n[[ b ]]", "a.b.c = 1", "\"quoted key\" = 1",
        "'literal key' = 1", "a-b_c = 1", "1234 = 1", "x = [\n  [1, 2],\n  [3],\n]", "x = [\n[\"é\"]]",
        "body = \"\"\"\n[é]\n\"\"\"", "body = '''\n[=]\n'''", "s = \"[é]\"", "# [é]\n[a]", "t = { a = [1, [2]] }\n[b]",
        "q = \"\\\"\"\n[c]", "x = \"\"\"a\"\"\"\"\n[d]", "x = \"\"\"a\"\"\"\"\"", "x = ''''a'''''",
        "x = \"\"\"\\\n   b\"\"\"",
        "x = \"\"\"a \\   \n b\"\"\"", "e = \"\\b\\t\\n\\f\\r\\\"\\\\\\u00e9\\U0001F389\"", "i = [1, -2, +3, 0, 1_000]",
        "h = [0xDEAD_beef, 0o755, 0b1101]", "f = [1.0, -0.5, 5e+22, 1e06, -2E-2, 6.626e-34, 224_617.445_991, 0e0]",
        "s = [inf, +inf, -inf, nan, +nan, -nan]", "b = [true, false]",
        "d = [1979-05-27T07:32:00Z, 1979-05-27T00:32:00-07:00, 1979-05-27T00:32:00.999999+01:30, 1979-05-27 07:32:00]",
        "l = [1979-05-27T07:32:00, 1979-05-27, 07:32:00, 00:32:00.999999, 1979-05-27t07:32:00z]",
        "d = 1979-05-27 # a date", "a = [ # c\n 1, # c\n # c\n 2 # c\n , ]", "a = []", "t = {}",
        "t = { a = 1, b.c = \"x\" }",
        "a = [\n]", "t = { a = [\n 1,\n 2 ] }", "key = \"value\"\t# tab before comment", "a = 'C:\\path'", "a=1",
    ])
    func validTomlPasses(text: String) {
        #expect(TOMLSyntaxCheck.firstError(in: text) == nil, "\(text.debugDescription)")
    }

    @Test func theExampleFilesPass() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        for path in [
            "config/chime.toml", "config/groups/daily-quote.toml", "config/groups/first-friday.toml",
            "config/groups/weekend-start.toml",
        ] {
            let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            #expect(TOMLSyntaxCheck.firstError(in: text) == nil, "\(path)")
        }
    }

    @Test func nestingIsBounded() {
        let deep = "a = " + String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(TOMLSyntaxCheck.firstError(in: deep)?.reason.contains("less deeply nested") == true)
        let fine = "a = " + String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(TOMLSyntaxCheck.firstError(in: fine) == nil)
    }
}
