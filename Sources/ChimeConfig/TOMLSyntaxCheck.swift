/// Checks that text follows TOML 1.0's syntax before TOMLKit reads it.
///
/// toml++ (the C++ parser inside TOMLKit) asserts what it expects at many points of its grammar instead
/// of checking it: on input such as `[é]`, `[=]` or `x = ["",}` it aborts the process (built with NDEBUG,
/// it goes on with undefined behaviour). So the syntax is checked here first, the whole grammar, and text
/// that breaks it is an error with its line and what was expected, as any other. What only the meaning
/// can tell (a key defined twice, a month 13) is left to toml++, which reports those itself.
enum TOMLSyntaxCheck {
    struct Failure: Error, Equatable {
        var line: Int
        var reason: String
    }

    /// The first place where `text` breaks TOML's syntax; nil when it follows it.
    static func firstError(in text: String) -> Failure? {
        var scanner = Scanner(bytes: Array(text.utf8))
        do {
            try scanner.document()
            return nil
        } catch {
            return error
        }
    }

    /// As deep as toml++ lets values nest.
    static let maximumNesting = 256

    private struct Scanner {
        let bytes: [UInt8]
        var i = 0
        var line = 1

        init(bytes: [UInt8]) { self.bytes = bytes }

        var current: UInt8? { i < bytes.count ? bytes[i] : nil }
        func peek(_ offset: Int) -> UInt8? { i + offset < bytes.count ? bytes[i + offset] : nil }

        func fail(_ expected: String) -> Failure {
            Failure(line: line, reason: "expected \(expected), found \(found)")
        }

        /// The character at `i`, as a message shows it.
        var found: String {
            guard let c = current else { return "the end of the file" }
            switch c {
            case UInt8(ascii: "\n"): return "the end of the line"
            case UInt8(ascii: "\r"): return "a carriage return"
            case UInt8(ascii: "\t"): return "a tab"
            case 0..<0x20, 0x7F: return "the control character U+\(String(c, radix: 16, uppercase: true))"
            default:
                var end = i + 1
                while end < bytes.count, bytes[end] & 0xC0 == 0x80, end - i < 4 { end += 1 }
                return "\"" + String(decoding: bytes[i..<end], as: UTF8.self) + "\""
            }
        }

        static func isDigit(_ c: UInt8?) -> Bool { c.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }
        static func isHex(_ c: UInt8?) -> Bool {
            guard let c else { return false }
            return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
        }
        static func isBareKey(_ c: UInt8?) -> Bool {
            guard let c else { return false }
            return isDigit(c) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == UInt8(ascii: "_")
                || c == UInt8(ascii: "-")
        }
        /// A control character TOML allows nowhere but as a tab (and line ends where lines may end).
        static func isControl(_ c: UInt8) -> Bool { (c < 0x20 && c != UInt8(ascii: "\t")) || c == 0x7F }

        mutating func expect(_ c: Character, _ what: String) throws(Failure) {
            guard current == c.asciiValue else { throw fail(what) }
            i += 1
        }

        mutating func skipBlanks() {
            while current == UInt8(ascii: " ") || current == UInt8(ascii: "\t") { i += 1 }
        }

        /// A line end (`\n` or `\r\n`) at `i`, consumed; false when there is none.
        mutating func newline() throws(Failure) -> Bool {
            if current == UInt8(ascii: "\n") {
                i += 1
                line += 1
                return true
            }
            if current == UInt8(ascii: "\r") {
                guard peek(1) == UInt8(ascii: "\n") else {
                    throw fail("a line end (a carriage return alone is not one)")
                }
                i += 2
                line += 1
                return true
            }
            return false
        }

        /// A comment to the end of its line, if one starts at `i`.
        mutating func comment() throws(Failure) {
            guard current == UInt8(ascii: "#") else { return }
            i += 1
            while let c = current, c != UInt8(ascii: "\n") {
                if c == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") { return }
                guard !Self.isControl(c) else { throw fail("text of a comment") }
                i += 1
            }
        }

        /// Blanks, then a comment, then a line end or the end of the file.
        mutating func endOfLine() throws(Failure) {
            skipBlanks()
            try comment()
            if current == nil { return }
            guard try newline() else { throw fail("the end of the line") }
        }

        mutating func document() throws(Failure) {
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
            while current != nil {
                skipBlanks()
                try comment()
                if try newline() { continue }
                guard let c = current else { return }
                if c == UInt8(ascii: "[") {
                    try tableHeader()
                } else {
                    try keyValue(depth: 0)
                }
                try endOfLine()
            }
        }

        mutating func tableHeader() throws(Failure) {
            i += 1
            let array = current == UInt8(ascii: "[")
            if array { i += 1 }
            skipBlanks()
            try key()
            skipBlanks()
            try expect("]", "\"]\" closing the table header")
            if array { try expect("]", "\"]]\" closing the array-of-tables header") }
        }

        /// A key: simple keys joined by dots, blanks allowed around the dots.
        mutating func key() throws(Failure) {
            while true {
                try simpleKey()
                skipBlanks()
                guard current == UInt8(ascii: ".") else { return }
                i += 1
                skipBlanks()
            }
        }

        mutating func simpleKey() throws(Failure) {
            switch current {
            case UInt8(ascii: "\"")?:
                guard peek(1) != UInt8(ascii: "\"") || peek(2) != UInt8(ascii: "\"") else {
                    throw fail("a key (a multi-line string cannot be one)")
                }
                try basicString()
            case UInt8(ascii: "'")?:
                guard peek(1) != UInt8(ascii: "'") || peek(2) != UInt8(ascii: "'") else {
                    throw fail("a key (a multi-line string cannot be one)")
                }
                try literalString()
            default:
                guard Self.isBareKey(current) else {
                    throw fail("a key: letters, digits, _ and -, or a quoted name")
                }
                while Self.isBareKey(current) { i += 1 }
            }
        }

        mutating func keyValue(depth: Int) throws(Failure) {
            try key()
            skipBlanks()
            try expect("=", "\"=\" after the key")
            skipBlanks()
            try value(depth: depth)
        }

        mutating func value(depth: Int) throws(Failure) {
            guard depth < TOMLSyntaxCheck.maximumNesting else { throw fail("less deeply nested values") }
            guard let c = current else { throw fail("a value") }
            switch c {
            case UInt8(ascii: "\""):
                if peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\"") {
                    try multilineString(quote: c)
                } else {
                    try basicString()
                }
            case UInt8(ascii: "'"):
                if peek(1) == UInt8(ascii: "'"), peek(2) == UInt8(ascii: "'") {
                    try multilineString(quote: c)
                } else {
                    try literalString()
                }
            case UInt8(ascii: "t"): try word("true")
            case UInt8(ascii: "f"): try word("false")
            case UInt8(ascii: "i"): try word("inf")
            case UInt8(ascii: "n"): try word("nan")
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "{"): try inlineTable(depth: depth)
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                i += 1
                switch current {
                case UInt8(ascii: "i")?: try word("inf")
                case UInt8(ascii: "n")?: try word("nan")
                default: try decimal()
                }
            default:
                guard Self.isDigit(c) else { throw fail("a value") }
                if Self.isDigit(peek(1)), Self.isDigit(peek(2)), Self.isDigit(peek(3)), peek(4) == UInt8(ascii: "-") {
                    try dateTime()
                } else if Self.isDigit(peek(1)), peek(2) == UInt8(ascii: ":") {
                    try time()
                } else if c == UInt8(ascii: "0"),
                    let radix = peek(1), [UInt8(ascii: "x"), UInt8(ascii: "o"), UInt8(ascii: "b")].contains(radix)
                {
                    try radixInteger(radix)
                } else {
                    try decimal()
                }
            }
        }

        mutating func word(_ text: String) throws(Failure) {
            for c in text.utf8 {
                guard current == c else { throw fail("\(text)") }
                i += 1
            }
        }

        /// Digits with single underscores between them; `valid` says which digits.
        mutating func digits(_ valid: (UInt8?) -> Bool, _ what: String) throws(Failure) {
            guard valid(current) else { throw fail(what) }
            i += 1
            while true {
                if current == UInt8(ascii: "_") {
                    i += 1
                    guard valid(current) else { throw fail("a digit after \"_\"") }
                } else if !valid(current) {
                    return
                }
                i += 1
            }
        }

        mutating func radixInteger(_ radix: UInt8) throws(Failure) {
            i += 2
            switch radix {
            case UInt8(ascii: "x"): try digits(Self.isHex, "a hexadecimal digit")
            case UInt8(ascii: "o"): try digits({ $0.map { $0 >= 0x30 && $0 <= 0x37 } ?? false }, "an octal digit")
            default: try digits({ $0 == 0x30 || $0 == 0x31 }, "a binary digit")
            }
        }

        /// An integer or a float in decimal, its sign already read.
        mutating func decimal() throws(Failure) {
            if current == UInt8(ascii: "0") {
                i += 1
                guard !Self.isDigit(current), current != UInt8(ascii: "_") else {
                    throw fail("no leading zero in a number")
                }
            } else {
                try digits(Self.isDigit, "a digit")
            }
            if current == UInt8(ascii: ".") {
                i += 1
                try digits(Self.isDigit, "a digit after the decimal point")
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                i += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { i += 1 }
                try digits(Self.isDigit, "a digit of the exponent")
            }
        }

        mutating func fixedDigits(_ count: Int, _ what: String) throws(Failure) {
            for _ in 0..<count {
                guard Self.isDigit(current) else { throw fail(what) }
                i += 1
            }
        }

        /// A date, and the time and offset that may follow it.
        mutating func dateTime() throws(Failure) {
            try fixedDigits(4, "a year of four digits")
            try expect("-", "\"-\" in a date")
            try fixedDigits(2, "a month of two digits")
            try expect("-", "\"-\" in a date")
            try fixedDigits(2, "a day of two digits")
            let separator = current
            if separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t") {
                i += 1
            } else if separator == UInt8(ascii: " "), Self.isDigit(peek(1)), Self.isDigit(peek(2)),
                peek(3) == UInt8(ascii: ":")
            {
                i += 1
            } else {
                return
            }
            try time()
            switch current {
            case UInt8(ascii: "Z")?, UInt8(ascii: "z")?:
                i += 1
            case UInt8(ascii: "+")?, UInt8(ascii: "-")?:
                i += 1
                try fixedDigits(2, "the hours of the offset")
                try expect(":", "\":\" in the offset")
                try fixedDigits(2, "the minutes of the offset")
            default:
                break
            }
        }

        mutating func time() throws(Failure) {
            try fixedDigits(2, "hours of two digits")
            try expect(":", "\":\" in a time")
            try fixedDigits(2, "minutes of two digits")
            try expect(":", "\":\" and the seconds")
            try fixedDigits(2, "seconds of two digits")
            if current == UInt8(ascii: ".") {
                i += 1
                try digits(Self.isDigit, "a digit of the fraction of a second")
            }
        }

        /// `"…"` on one line, with the specification's escapes.
        mutating func basicString() throws(Failure) {
            i += 1
            while true {
                guard let c = current else { throw fail("\" closing the string") }
                switch c {
                case UInt8(ascii: "\""):
                    i += 1
                    return
                case UInt8(ascii: "\\"):
                    try escape()
                case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                    throw fail("\" closing the string on its line")
                default:
                    guard !Self.isControl(c) else {
                        throw fail("text of a string (write the control character as an escape)")
                    }
                    i += 1
                }
            }
        }

        /// `'…'` on one line, taken as written.
        mutating func literalString() throws(Failure) {
            i += 1
            while true {
                guard let c = current else { throw fail("' closing the string") }
                switch c {
                case UInt8(ascii: "'"):
                    i += 1
                    return
                case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                    throw fail("' closing the string on its line")
                default:
                    guard !Self.isControl(c) else { throw fail("text of a string") }
                    i += 1
                }
            }
        }

        /// `\b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX`, naming a Unicode scalar.
        mutating func escape() throws(Failure) {
            i += 1
            guard let c = current else { throw fail("an escape after \\") }
            switch c {
            case UInt8(ascii: "b"), UInt8(ascii: "t"), UInt8(ascii: "n"), UInt8(ascii: "f"), UInt8(ascii: "r"),
                UInt8(ascii: "\""), UInt8(ascii: "\\"):
                i += 1
            case UInt8(ascii: "u"), UInt8(ascii: "U"):
                let count = c == UInt8(ascii: "u") ? 4 : 8
                i += 1
                var value: UInt32 = 0
                for _ in 0..<count {
                    guard let h = current, Self.isHex(h) else {
                        throw fail("\(count) hexadecimal digits after \\\(Character(UnicodeScalar(c)))")
                    }
                    value = value << 4 | UInt32(Int(String(UnicodeScalar(h)), radix: 16) ?? 0)
                    i += 1
                }
                guard Unicode.Scalar(value) != nil else { throw fail("an escape of a Unicode scalar value") }
            default:
                throw fail("an escape: \\b \\t \\n \\f \\r \\\" \\\\ \\u or \\U")
            }
        }

        /// `"""…"""` or `'''…'''`: line ends allowed; a basic one has escapes and line-ending backslashes.
        mutating func multilineString(quote: UInt8) throws(Failure) {
            let basic = quote == UInt8(ascii: "\"")
            i += 3
            while true {
                guard let c = current else { throw fail("\(basic ? "\"\"\"" : "'''") closing the string") }
                if c == quote, peek(1) == quote, peek(2) == quote {
                    i += 3
                    // One or two more quotes belong to the string: `""""` ends it with a quote inside.
                    for _ in 0..<2 where current == quote { i += 1 }
                    return
                }
                if try newline() { continue }
                if basic, c == UInt8(ascii: "\\") {
                    // A backslash at the end of a line (blanks may follow it) joins the next line.
                    var j = i + 1
                    while j < bytes.count, bytes[j] == UInt8(ascii: " ") || bytes[j] == UInt8(ascii: "\t") { j += 1 }
                    if j < bytes.count, bytes[j] == UInt8(ascii: "\n") || bytes[j] == UInt8(ascii: "\r") {
                        i = j
                        guard try newline() else { throw fail("a line end") }
                        continue
                    }
                    try escape()
                    continue
                }
                guard !Self.isControl(c) else { throw fail("text of a string") }
                i += 1
            }
        }

        /// Blanks, comments and line ends, as arrays allow between their values.
        mutating func skipArraySpace() throws(Failure) {
            while true {
                skipBlanks()
                try comment()
                guard try newline() else { return }
            }
        }

        mutating func array(depth: Int) throws(Failure) {
            i += 1
            try skipArraySpace()
            while current != UInt8(ascii: "]") {
                try value(depth: depth + 1)
                try skipArraySpace()
                guard current == UInt8(ascii: ",") else { break }
                i += 1
                try skipArraySpace()
            }
            try expect("]", "\",\" or \"]\" in the list")
        }

        /// `{ key = value, … }` on one line, no comma after the last.
        mutating func inlineTable(depth: Int) throws(Failure) {
            i += 1
            skipBlanks()
            if current == UInt8(ascii: "}") {
                i += 1
                return
            }
            while true {
                try keyValue(depth: depth + 1)
                skipBlanks()
                if current == UInt8(ascii: "}") {
                    i += 1
                    return
                }
                try expect(",", "\",\" or \"}\" in the inline table (it stays on one line)")
                skipBlanks()
            }
        }
    }
}
