import Foundation
import Testing

@testable import ChimeCore

@Suite struct BodyMarkupTests {
    @Test(arguments: [
        ("<b>bold</b> <script>", "<b>bold</b> &lt;script&gt;"),
        ("a & b > c", "a &amp; b &gt; c"),
        ("&amp; &lt; &gt; &quot; &apos; &#233; &#x41;", "&amp; &lt; &gt; &quot; &apos; &#233; &#x41;"),
        ("&bogus; &#0; &#xZZ; &", "&amp;bogus; &amp;#0; &amp;#xZZ; &amp;"),
        ("<b>unclosed", "<b>unclosed</b>"),
        ("</b>stray", "&lt;/b&gt;stray"),
        ("<i><b>x</i></b>", "<i><b>x&lt;/i&gt;</b></i>"),
        ("<B>caps</B> <U>u</u>", "<b>caps</b> <u>u</u>"),
        ("<b onclick=\"x\">y</b>", "&lt;b onclick=\"x\"&gt;y&lt;/b&gt;"),
        (
            "<a href=\"https://example.org/?a=1&amp;b=2\">link</a>",
            "<a href=\"https://example.org/?a=1&amp;b=2\">link</a>"
        ),
        ("<a href='mailto:me@example.org'>me</a>", "<a href=\"mailto:me@example.org\">me</a>"),
        ("<a href=\"javascript:alert(1)\">x</a>", "&lt;a href=\"javascript:alert(1)\"&gt;x&lt;/a&gt;"),
        (
            "<img src=\"/tmp/a b.png\" alt=\"a \\\"pic\\\"\"/>",
            "&lt;img src=\"/tmp/a b.png\" alt=\"a \\\"pic\\\"\"/&gt;"
        ),
        ("<img src=\"/tmp/pic.png\" alt=\"x &lt; y\"/>", "<img src=\"/tmp/pic.png\" alt=\"x &lt; y\"/>"),
        ("<img src=\"/tmp/pic.png\">", "<img src=\"/tmp/pic.png\" alt=\"\"/>"),
        ("<br/> <p>para</p>", "&lt;br/&gt; &lt;p&gt;para&lt;/p&gt;"),
        ("<b", "&lt;b"),
        ("x <b attr=unquoted>", "x &lt;b attr=unquoted&gt;"),
    ])
    func aServerThatReadsMarkupGetsTheSubsetRebuiltAndTheRestEscaped(input: String, expected: String) {
        #expect(BodyMarkup.sanitized(input) == expected)
    }

    @Test(arguments: [
        ("<b>bold</b> <script> &amp; &lt;", "bold <script> & <"),
        ("<a href=\"https://example.org\">link</a> and <i>more", "link and more"),
        ("see <img src=\"/tmp/pic.png\" alt=\"the chart\"/>", "see the chart"),
        ("&#233;t&#xE9; &bogus;", "été &bogus;"),
        ("</b>stray", "</b>stray"),
    ])
    func aServerWithoutMarkupGetsTheTextAPersonReads(input: String, expected: String) {
        #expect(BodyMarkup.plain(input) == expected)
    }

    @Test(arguments: [
        ("<b>bold</b> <i>it</i> <u>u</u> <script>", "<b>bold</b> <i>it</i> <u>u</u> &lt;script&gt;"),
        ("<a href=\"https://example.org/\">a <b>link</b></a> and more", "a <b>link</b> and more"),
        ("<b><a href=\"https://example.org/\">open", "<b>open</b>"),
        ("see <img src=\"/tmp/pic.png\" alt=\"x &lt; y\"/>", "see x &lt; y"),
        ("&#233;t&#xE9; &#60;b&#62; &amp; &lt;", "été &lt;b&gt; &amp; &lt;"),
    ])
    func aServerThatReadsOnlyBoldItalicAndUnderlineGetsTheRestAsText(input: String, expected: String) {
        #expect(BodyMarkup.basic(input) == expected)
    }

    @Test func nestingDeeperThanTheLimitIsShownAsWritten() {
        let depth = BodyMarkup.maximumDepth + 2
        let input = String(repeating: "<b>", count: depth) + "x"
        let kept = String(repeating: "<b>", count: BodyMarkup.maximumDepth)
        let shown = String(repeating: "&lt;b&gt;", count: 2)
        let closed = String(repeating: "</b>", count: BodyMarkup.maximumDepth)
        #expect(BodyMarkup.sanitized(input) == kept + shown + "x" + closed)
    }

    /// Plain text escaped is markup that means that text: sanitizing leaves it alone, and the plain
    /// rendering gives the text back, for any text.
    @Test func escapedTextSurvivesBothRenderings() {
        var random = SplitMix64(seed: 0x6d61_726b_7570)
        let alphabet = Array("<>&;/#x=\"' abiuimgsrchefAB1é\n")
        for _ in 0..<5_000 {
            let length = Int(random.next() % 24)
            let text = String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            let escaped = BodyMarkup.escaped(text)
            #expect(BodyMarkup.sanitized(escaped) == escaped, "\(text.debugDescription)")
            #expect(BodyMarkup.plain(escaped) == text, "\(text.debugDescription)")
        }
    }

    /// Whatever comes in, what a markup server gets has every tag closed in order and every `&` starting
    /// an entity: checked by a reader independent of the sanitizer, over random input.
    @Test func whatAMarkupServerGetsIsAlwaysWellFormed() {
        var random = SplitMix64(seed: 0x7765_6c6c)
        let pieces = [
            "<b>", "</b>", "<i>", "</i>", "<u>", "</u>", "<a href=\"http://x\">", "</a>", "<img src=\"p\"/>", "<",
            ">", "&", "&amp;", "&#65;", "text", " ", "<script>", "\"", "'",
        ]
        for _ in 0..<5_000 {
            let count = Int(random.next() % 12)
            let input = (0..<count).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
            let output = BodyMarkup.sanitized(input)
            #expect(Self.isWellFormed(output), "\(input.debugDescription) → \(output.debugDescription)")
            // GNOME Shell's: b, i and u only, and the named entities (it shows anything else as written).
            let basic = BodyMarkup.basic(input)
            #expect(
                Self.isWellFormed(basic, tags: ["b", "i", "u"], numericEntities: false),
                "\(input.debugDescription) → \(basic.debugDescription)")
        }
    }

    /// A small reader of the specification's markup: tags b, i, u, a (with href), img (self-closed),
    /// balanced; `&` only in the five named or numeric entities; no bare `<` or `>`. Or of fewer `tags`
    /// only, and without numeric entities.
    static func isWellFormed(
        _ text: String, tags: Set<String> = ["b", "i", "u", "a", "img"], numericEntities: Bool = true
    ) -> Bool {
        var stack: [String] = []
        var rest = Substring(text)
        while let c = rest.first {
            if c == "<" {
                guard let end = rest.firstIndex(of: ">") else { return false }
                let tag = rest[rest.index(after: rest.startIndex)..<end]
                rest = rest[rest.index(after: end)...]
                if tag.hasPrefix("/") {
                    guard stack.popLast() == String(tag.dropFirst()) else { return false }
                } else if tag.hasPrefix("img ") && tag.hasSuffix("/") {
                    guard tags.contains("img") else { return false }
                    continue
                } else {
                    let name = tag.split(separator: " ").first.map(String.init) ?? ""
                    guard tags.contains(name), name != "img" else { return false }
                    stack.append(name)
                }
            } else if c == ">" {
                return false
            } else if c == "&" {
                guard let end = rest.firstIndex(of: ";") else { return false }
                let name = rest[rest.index(after: rest.startIndex)..<end]
                guard ["amp", "lt", "gt", "quot", "apos"].contains(name) || (numericEntities && name.hasPrefix("#"))
                else { return false }
                rest = rest[rest.index(after: end)...]
            } else {
                rest = rest.dropFirst()
            }
        }
        return stack.isEmpty
    }
}
