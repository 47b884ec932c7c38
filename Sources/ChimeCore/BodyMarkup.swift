/// A body written in the markup of the notification specification: `<b>`, `<i>`, `<u>`,
/// `<a href="…">` and `<img src="…" alt="…"/>`, with the entities `&amp;` `&lt;` `&gt;` `&quot;`
/// `&apos;` and numeric ones.
///
/// Servers that read markup (the `body-markup` capability) parse it strictly: dunst and GNOME hand it to
/// Pango, which shows nothing useful for a stray `<` or an unclosed tag. So what reaches such a server is
/// rebuilt from what was understood (`sanitized`): the five tags with only their known attributes,
/// balanced, and everything else escaped, so that `<script>` is shown as written. A server without markup
/// gets the text a person would read (`plain`): the tags gone, an image by its alt text, the entities
/// decoded.
///
/// Both run in one pass over the text; tags nest at most `maximumDepth` deep (deeper ones are shown as
/// written).
public enum BodyMarkup {
    /// The deepest nesting of tags kept.
    public static let maximumDepth = 16

    /// The body for a server that reads markup.
    public static func sanitized(_ text: String) -> String { render(text, markup: true) }

    /// The body for a server that shows text as it is.
    public static func plain(_ text: String) -> String { render(text, markup: false) }

    /// The body for a server that reads only `<b>`, `<i>`, `<u>` and the named entities and shows any
    /// other markup as written (GNOME Shell): a link becomes its text, an image its alt text, a numeric
    /// entity its character.
    public static func basic(_ text: String) -> String { render(text, markup: true, basic: true) }

    /// `text` with `&`, `<` and `>` written as entities: plain text for a markup server.
    public static func escaped(_ text: String) -> String {
        // By scalar, not by Character: "<" followed by a combining mark is one Character, and must still be
        // escaped.
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E }) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { append(scalar, escapedTo: &escaped) }
        return String(escaped)
    }

    private static func append(
        _ scalar: Unicode.Scalar, escapedTo out: inout String.UnicodeScalarView, inAttribute: Bool = false
    ) {
        switch scalar {
        case "&": out.append(contentsOf: "&amp;".unicodeScalars)
        case "<": out.append(contentsOf: "&lt;".unicodeScalars)
        case ">": out.append(contentsOf: "&gt;".unicodeScalars)
        case "\"" where inAttribute: out.append(contentsOf: "&quot;".unicodeScalars)
        default: out.append(scalar)
        }
    }

    /// A tag as understood.
    private enum Tag: Equatable {
        case open(String, href: String?)
        case close(String)
        case image(source: String, alt: String)
    }

    private static func render(_ text: String, markup: Bool, basic: Bool = false) -> String {
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var open: [String] = []
        var i = 0
        while i < scalars.count {
            let scalar = scalars[i]
            if scalar == "<", let (tag, end) = readTag(scalars, from: i) {
                switch tag {
                case .open(let name, let href) where open.count < maximumDepth:
                    open.append(name)
                    if markup, !(basic && name == "a") {
                        out.append(contentsOf: "<\(name)".unicodeScalars)
                        if let href {
                            out.append(contentsOf: " href=\"".unicodeScalars)
                            for s in href.unicodeScalars { append(s, escapedTo: &out, inAttribute: true) }
                            out.append("\"")
                        }
                        out.append(">")
                    }
                    i = end
                    continue
                case .close(let name) where open.last == name:
                    open.removeLast()
                    if markup, !(basic && name == "a") { out.append(contentsOf: "</\(name)>".unicodeScalars) }
                    i = end
                    continue
                case .image(let source, let alt):
                    if basic {
                        for s in alt.unicodeScalars { append(s, escapedTo: &out) }
                    } else if markup {
                        out.append(contentsOf: "<img src=\"".unicodeScalars)
                        for s in source.unicodeScalars { append(s, escapedTo: &out, inAttribute: true) }
                        out.append(contentsOf: "\" alt=\"".unicodeScalars)
                        for s in alt.unicodeScalars { append(s, escapedTo: &out, inAttribute: true) }
                        out.append(contentsOf: "\"/>".unicodeScalars)
                    } else {
                        out.append(contentsOf: alt.unicodeScalars)
                    }
                    i = end
                    continue
                default:
                    break  // Too deep, or a closing tag that closes nothing open: shown as written.
                }
            }
            if scalar == "&", let (decoded, end) = readEntity(scalars, from: i) {
                if basic, scalars[i + 1] == "#" {
                    append(decoded, escapedTo: &out)
                } else if markup {
                    out.append(contentsOf: scalars[i..<end])
                } else {
                    out.append(decoded)
                }
                i = end
                continue
            }
            if markup { append(scalar, escapedTo: &out) } else { out.append(scalar) }
            i += 1
        }
        // Tags left open are closed, innermost first, so the server's parser accepts the whole.
        if markup {
            for name in open.reversed() where !(basic && name == "a") {
                out.append(contentsOf: "</\(name)>".unicodeScalars)
            }
        }
        return String(out)
    }

    /// The tag starting at `start` (a `<`), when it is one of the specification's, and the index after
    /// its `>`.
    private static func readTag(_ s: [Unicode.Scalar], from start: Int) -> (Tag, Int)? {
        var i = start + 1
        let closing = i < s.count && s[i] == "/"
        if closing { i += 1 }
        var name = ""
        while i < s.count, ("a"..."z").contains(s[i]) || ("A"..."Z").contains(s[i]) {
            name.unicodeScalars.append(s[i])
            i += 1
        }
        name = name.lowercased()
        guard ["b", "i", "u", "a", "img"].contains(name) else { return nil }
        var attributes: [String: String] = [:]
        var selfClosing = false
        while true {
            while i < s.count, s[i] == " " || s[i] == "\t" || s[i] == "\n" { i += 1 }
            guard i < s.count else { return nil }
            if s[i] == ">" {
                i += 1
                break
            }
            if s[i] == "/", i + 1 < s.count, s[i + 1] == ">" {
                selfClosing = true
                i += 2
                break
            }
            // name="value" or name='value'
            var key = ""
            while i < s.count, ("a"..."z").contains(s[i]) || ("A"..."Z").contains(s[i]) || s[i] == "-" {
                key.unicodeScalars.append(s[i])
                i += 1
            }
            guard !key.isEmpty, i + 1 < s.count, s[i] == "=", s[i + 1] == "\"" || s[i + 1] == "'" else { return nil }
            let quote = s[i + 1]
            i += 2
            var value = String.UnicodeScalarView()
            while i < s.count, s[i] != quote {
                guard s[i] != "<" else { return nil }
                if s[i] == "&", let (decoded, end) = readEntity(s, from: i) {
                    value.append(decoded)
                    i = end
                } else {
                    value.append(s[i])
                    i += 1
                }
            }
            guard i < s.count else { return nil }
            i += 1
            guard attributes.updateValue(String(value), forKey: key.lowercased()) == nil else { return nil }
        }
        switch (name, closing) {
        case ("img", false):
            guard let source = attributes["src"], attributes.keys.allSatisfy({ $0 == "src" || $0 == "alt" }) else {
                return nil
            }
            return (.image(source: source, alt: attributes["alt"] ?? ""), i)
        case ("a", false):
            guard !selfClosing, attributes.keys.allSatisfy({ $0 == "href" }) else { return nil }
            if let href = attributes["href"] {
                let lower = href.lowercased()
                guard ["http://", "https://", "mailto:", "file://"].contains(where: lower.hasPrefix) else { return nil }
            }
            return (.open("a", href: attributes["href"]), i)
        case (_, false):
            guard !selfClosing, attributes.isEmpty else { return nil }
            return (.open(name, href: nil), i)
        case (_, true):
            guard !selfClosing, attributes.isEmpty, name != "img" else { return nil }
            return (.close(name), i)
        }
    }

    /// The entity starting at `start` (a `&`), decoded, and the index after its `;`; nil when it is not
    /// one a markup parser accepts.
    private static func readEntity(_ s: [Unicode.Scalar], from start: Int) -> (Unicode.Scalar, Int)? {
        var i = start + 1
        var name = ""
        while i < s.count, s[i] != ";", name.unicodeScalars.count < 10 {
            name.unicodeScalars.append(s[i])
            i += 1
        }
        guard i < s.count, s[i] == ";" else { return nil }
        let end = i + 1
        switch name {
        case "amp": return ("&", end)
        case "lt": return ("<", end)
        case "gt": return (">", end)
        case "quot": return ("\"", end)
        case "apos": return ("'", end)
        default:
            guard name.hasPrefix("#") else { return nil }
            let digits = name.dropFirst()
            let value: UInt32? =
                digits.first == "x" || digits.first == "X"
                ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            // Pango refuses NUL and the other controls but tab and newline.
            guard let value, value >= 0x20 || value == 0x09 || value == 0x0A, let scalar = Unicode.Scalar(value)
            else { return nil }
            return (scalar, end)
        }
    }
}
