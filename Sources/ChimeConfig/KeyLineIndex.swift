/// One step of a path into a TOML document: a key of a table or an index into an array.
enum KeyPathComponent: Hashable, Sendable {
    case key(String)
    case index(Int)
}

/// The line on which each key, table header and array element of a TOML document starts.
///
/// TOMLKit gives values but no positions, and an error that says only "somewhere in the file" is no
/// help, so this scans the text once for positions alone. It reads only what decides where a key is
/// (headers, keys, string and bracket boundaries, comments) and never interprets a value: values come
/// from TOMLKit. It runs only on text TOMLKit has accepted; on anything it does not follow it stops
/// early, and the keys it did not reach fall back to the line of their table.
struct KeyLineIndex {
    private(set) var lines: [[KeyPathComponent]: Int] = [:]

    /// The line where `path` is written, if it was found.
    func line(of path: [KeyPathComponent]) -> Int? { lines[path] }

    init(_ text: String) {
        var scanner = Scanner(bytes: Array(text.utf8))
        scanner.scanDocument()
        lines = scanner.lines
    }

    private struct Scanner {
        let bytes: [UInt8]
        var i = 0
        var line = 1
        var lines: [[KeyPathComponent]: Int] = [:]
        /// How many elements each array of tables (`[[entry]]`) has so far, by its resolved path.
        var arrayTableCounts: [[KeyPathComponent]: Int] = [:]

        init(bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { i >= bytes.count }
        var current: UInt8? { i < bytes.count ? bytes[i] : nil }
        func peek(_ offset: Int) -> UInt8? { i + offset < bytes.count ? bytes[i + offset] : nil }

        mutating func record(_ path: [KeyPathComponent], line: Int) {
            if lines[path] == nil { lines[path] = line }
        }

        mutating func advance() {
            if bytes[i] == UInt8(ascii: "\n") { line += 1 }
            i += 1
        }

        /// Spaces, tabs, and (when `newlines`) line ends and comments.
        mutating func skipBlank(newlines: Bool) {
            while let c = current {
                switch c {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                    i += 1
                case UInt8(ascii: "\n") where newlines:
                    advance()
                case UInt8(ascii: "#") where newlines:
                    while let d = current, d != UInt8(ascii: "\n") { i += 1 }
                default:
                    return
                }
            }
        }

        mutating func skipRestOfLine() {
            while let c = current, c != UInt8(ascii: "\n") { i += 1 }
        }

        mutating func scanDocument() {
            var table: [KeyPathComponent] = []
            while true {
                skipBlank(newlines: true)
                guard let c = current else { return }
                let start = i
                if c == UInt8(ascii: "[") {
                    let isArray = peek(1) == UInt8(ascii: "[")
                    i += isArray ? 2 : 1
                    guard let keys = scanKey() else { return }
                    table = resolveHeader(keys, isArray: isArray)
                    record(table, line: line)
                    skipRestOfLine()
                } else {
                    let keyLine = line
                    guard let keys = scanKey(), current == UInt8(ascii: "=") else { return }
                    i += 1
                    for n in 1...keys.count { record(table + keys[..<n].map { .key($0) }, line: keyLine) }
                    scanValue(path: table + keys.map { .key($0) })
                }
                // Every pass must consume something, so that text this scanner does not follow ends it.
                if i == start { return }
            }
        }

        /// The full path a header names: an array of tables met on the way stands for its last element, as
        /// TOML defines (`[entry.pool]` after `[[entry]]` belongs to that entry).
        mutating func resolveHeader(_ keys: [String], isArray: Bool) -> [KeyPathComponent] {
            var path: [KeyPathComponent] = []
            for (n, key) in keys.enumerated() {
                path.append(.key(key))
                if isArray, n == keys.count - 1 {
                    let count = arrayTableCounts[path, default: 0]
                    arrayTableCounts[path] = count + 1
                    path.append(.index(count))
                } else if let count = arrayTableCounts[path] {
                    path.append(.index(count - 1))
                }
            }
            return path
        }

        /// A dotted key (`a."b c".d`), leaving the scanner after it and any blanks; nil when there is none.
        mutating func scanKey() -> [String]? {
            var keys: [String] = []
            while true {
                skipBlank(newlines: false)
                guard let c = current else { return nil }
                if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                    i += 1
                    var raw: [UInt8] = []
                    while let d = current, d != c, d != UInt8(ascii: "\n") {
                        // A backslash keeps the next byte, so an escaped quote does not end the key.
                        if c == UInt8(ascii: "\""), d == UInt8(ascii: "\\"), let e = peek(1) {
                            raw.append(e)
                            i += 2
                        } else {
                            raw.append(d)
                            i += 1
                        }
                    }
                    guard current == c else { return nil }
                    i += 1
                    keys.append(String(decoding: raw, as: UTF8.self))
                } else {
                    let start = i
                    while let d = current, Self.isBareKeyByte(d) { i += 1 }
                    guard i > start else { return nil }
                    keys.append(String(decoding: bytes[start..<i], as: UTF8.self))
                }
                skipBlank(newlines: false)
                guard current == UInt8(ascii: ".") else { return keys }
                i += 1
            }
        }

        static func isBareKeyByte(_ c: UInt8) -> Bool {
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-")
                || c == UInt8(ascii: "_")
        }

        /// One value; arrays and inline tables record the lines of their elements and keys.
        mutating func scanValue(path: [KeyPathComponent]) {
            skipBlank(newlines: false)
            guard let c = current else { return }
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                scanString(quote: c)
            case UInt8(ascii: "["):
                i += 1
                var index = 0
                while true {
                    skipBlank(newlines: true)
                    guard let d = current else { return }
                    if d == UInt8(ascii: "]") {
                        i += 1
                        return
                    }
                    record(path + [.index(index)], line: line)
                    let start = i
                    scanValue(path: path + [.index(index)])
                    skipBlank(newlines: true)
                    if current == UInt8(ascii: ",") {
                        i += 1
                        index += 1
                    } else if current != UInt8(ascii: "]") || i == start {
                        return
                    }
                }
            case UInt8(ascii: "{"):
                i += 1
                while true {
                    skipBlank(newlines: true)
                    guard let d = current else { return }
                    if d == UInt8(ascii: "}") {
                        i += 1
                        return
                    }
                    let keyLine = line
                    guard let keys = scanKey(), current == UInt8(ascii: "=") else { return }
                    i += 1
                    for n in 1...keys.count { record(path + keys[..<n].map { .key($0) }, line: keyLine) }
                    scanValue(path: path + keys.map { .key($0) })
                    skipBlank(newlines: true)
                    if current == UInt8(ascii: ",") { i += 1 } else if current != UInt8(ascii: "}") { return }
                }
            default:
                // A number, boolean or date: it ends where the next separator starts. (A date may hold a
                // space, so a space does not end it.)
                while let d = current, d != UInt8(ascii: ","), d != UInt8(ascii: "]"), d != UInt8(ascii: "}"),
                    d != UInt8(ascii: "\n"), d != UInt8(ascii: "#")
                {
                    i += 1
                }
            }
        }

        /// A basic or literal string, single- or multi-line, counting the lines it spans.
        mutating func scanString(quote: UInt8) {
            let multiline = peek(1) == quote && peek(2) == quote
            i += multiline ? 3 : 1
            while let c = current {
                if quote == UInt8(ascii: "\""), c == UInt8(ascii: "\\"), i + 1 < bytes.count {
                    advance()
                    advance()
                    continue
                }
                if c == quote {
                    if !multiline {
                        i += 1
                        return
                    }
                    if peek(1) == quote, peek(2) == quote {
                        i += 3
                        // Up to two more quotes may end the content just before the closing delimiter.
                        var extra = 0
                        while extra < 2, current == quote {
                            i += 1
                            extra += 1
                        }
                        return
                    }
                }
                if !multiline, c == UInt8(ascii: "\n") { return }
                advance()
            }
        }
    }
}
