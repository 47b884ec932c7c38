import Foundation

/// An iCalendar (RFC 5545) object as content lines grouped into components: `BEGIN:VCALENDAR` …
/// `END:VCALENDAR`, with `VEVENT`, `VTODO`, `VALARM`, `VTIMEZONE` and the rest inside. Only the syntax
/// is read here (unfolding, parameters, nesting); what the values mean is for the reader of each
/// property.
///
/// Limits, each answered with an ``ICalendarError`` naming the line: a document of at most
/// ``maximumBytes``, components nested at most ``maximumDepth`` deep, at most ``maximumComponents``
/// components and ``maximumLineBytes`` in one unfolded line.
public struct ICalendarComponent: Hashable, Sendable {
    /// `VCALENDAR`, `VEVENT`, … (upper case).
    public var name: String
    public var properties: [ICalendarProperty]
    public var components: [ICalendarComponent]
    /// The line of its `BEGIN`, 1-based.
    public var line: Int

    public init(
        name: String, properties: [ICalendarProperty] = [], components: [ICalendarComponent] = [], line: Int = 0
    ) {
        self.name = name
        self.properties = properties
        self.components = components
        self.line = line
    }

    /// The first property of that name.
    public func property(_ name: String) -> ICalendarProperty? { properties.first { $0.name == name } }

    /// Every property of that name.
    public func properties(_ name: String) -> [ICalendarProperty] { properties.filter { $0.name == name } }

    /// Sub-components of that name.
    public func components(_ name: String) -> [ICalendarComponent] { components.filter { $0.name == name } }

    public static let maximumBytes = 16 << 20
    public static let maximumDepth = 8
    public static let maximumComponents = 100_000
    public static let maximumLineBytes = 256 << 10

    /// Reads every top-level component (a file normally holds one `VCALENDAR`; several are allowed).
    /// Lines may end in CRLF or LF; a line that starts with a space or a tab continues the previous one.
    public static func parse(_ text: String) throws(ICalendarError) -> [ICalendarComponent] {
        guard text.utf8.count <= maximumBytes else {
            throw ICalendarError(
                line: 0, "the file has \(text.utf8.count) bytes, more than the \(maximumBytes) allowed; split it")
        }
        var stack: [ICalendarComponent] = []
        var roots: [ICalendarComponent] = []
        var count = 0
        for (number, line) in unfoldedLines(text) {
            guard line.utf8.count <= maximumLineBytes else {
                throw ICalendarError(line: number, "the line is longer than \(maximumLineBytes) bytes")
            }
            let property = try ICalendarProperty.parse(line, line: number)
            switch property.name {
            case "BEGIN":
                let name = property.value.uppercased()
                guard !name.isEmpty else { throw ICalendarError(line: number, "BEGIN names no component") }
                guard stack.count < maximumDepth else {
                    throw ICalendarError(line: number, "components are nested more than \(maximumDepth) deep")
                }
                count += 1
                guard count <= maximumComponents else {
                    throw ICalendarError(line: number, "the file has more than \(maximumComponents) components")
                }
                stack.append(ICalendarComponent(name: name, line: number))
            case "END":
                let name = property.value.uppercased()
                guard let open = stack.popLast() else {
                    throw ICalendarError(line: number, "END:\(name) closes nothing")
                }
                guard open.name == name else {
                    throw ICalendarError(
                        line: number,
                        "END:\(name) closes BEGIN:\(open.name) of line \(open.line); write END:\(open.name)")
                }
                if stack.isEmpty { roots.append(open) } else { stack[stack.count - 1].components.append(open) }
            default:
                guard !stack.isEmpty else {
                    throw ICalendarError(
                        line: number, "\(property.name) is outside any component; a file starts with BEGIN:VCALENDAR")
                }
                stack[stack.count - 1].properties.append(property)
            }
        }
        if let open = stack.last {
            throw ICalendarError(line: open.line, "BEGIN:\(open.name) is never closed; add END:\(open.name)")
        }
        guard !roots.isEmpty else { throw ICalendarError(line: 0, "the file holds no BEGIN:VCALENDAR") }
        return roots
    }

    /// The logical lines with the number of the physical line each starts on; blank lines are skipped.
    static func unfoldedLines(_ text: String) -> [(Int, String)] {
        var result: [(Int, String)] = []
        var current: [UInt8] = []
        var start = 0
        var number = 0
        func flush() {
            if !current.isEmpty { result.append((start, String(decoding: current, as: UTF8.self))) }
            current.removeAll(keepingCapacity: true)
        }
        for raw in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            var line = raw[...]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if let first = line.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
                // A continuation; the first whitespace character is the fold itself.
                if current.count <= maximumLineBytes { current.append(contentsOf: line.dropFirst()) }
                continue
            }
            flush()
            start = number
            current.append(contentsOf: line)
        }
        flush()
        return result
    }

    /// The component as content lines (CRLF, folded at 75 octets).
    public var serialized: String {
        var out = ""
        serialize(into: &out)
        return out
    }

    func serialize(into out: inout String) {
        out += "BEGIN:\(name)\r\n"
        for property in properties { out += property.serialized }
        for component in components { component.serialize(into: &out) }
        out += "END:\(name)\r\n"
    }
}

/// One content line: `NAME;PARAM=VALUE;…:value`.
public struct ICalendarProperty: Hashable, Sendable {
    /// Upper case.
    public var name: String
    /// Parameter names upper case; values as written, quotes removed.
    public var parameters: [String: [String]]
    /// The raw value (TEXT escapes still in it: see ``text``).
    public var value: String
    public var line: Int

    public init(_ name: String, _ value: String, parameters: [String: [String]] = [:], line: Int = 0) {
        self.name = name
        self.value = value
        self.parameters = parameters
        self.line = line
    }

    /// A TEXT property: `value` is escaped from `text`.
    public init(_ name: String, text: String, parameters: [String: [String]] = [:]) {
        self.init(name, Self.escape(text), parameters: parameters)
    }

    /// The first value of a parameter.
    public func parameter(_ name: String) -> String? { parameters[name]?.first }

    /// The value read as TEXT: `\n`, `\,`, `\;` and `\\` undone.
    public var text: String { Self.unescape(value) }

    /// Splits `NAME;P=V;Q="a,b":value`. Names and parameter names are letters, digits and `-`.
    static func parse(_ line: String, line number: Int) throws(ICalendarError) -> ICalendarProperty {
        let bytes = Array(line.utf8)
        var index = 0
        func isNameByte(_ b: UInt8) -> Bool {
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2D
        }
        func name() -> String {
            let start = index
            while index < bytes.count, isNameByte(bytes[index]) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self).uppercased()
        }
        let propertyName = name()
        guard !propertyName.isEmpty else {
            throw ICalendarError(
                line: number, "\"\(line.prefix(40))\" is not a content line; expected NAME:value")
        }
        var parameters: [String: [String]] = [:]
        while index < bytes.count, bytes[index] == UInt8(ascii: ";") {
            index += 1
            let parameterName = name()
            guard !parameterName.isEmpty, index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                throw ICalendarError(
                    line: number, "a parameter of \(propertyName) has no name or no '='; expected ;NAME=value")
            }
            index += 1
            // Values separated by commas, each possibly empty (`P=,a` is "" and "a").
            var values: [String] = []
            while true {
                if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                    let start = index + 1
                    guard let close = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else {
                        throw ICalendarError(
                            line: number, "the parameter \(parameterName) opens a quote it never closes")
                    }
                    values.append(String(decoding: bytes[start..<close], as: UTF8.self))
                    index = close + 1
                } else {
                    let start = index
                    while index < bytes.count,
                        ![UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: ":")].contains(
                            bytes[index])
                    {
                        index += 1
                    }
                    values.append(String(decoding: bytes[start..<index], as: UTF8.self))
                }
                guard index < bytes.count, bytes[index] == UInt8(ascii: ",") else { break }
                index += 1
            }
            parameters[parameterName, default: []].append(contentsOf: values)
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
            throw ICalendarError(line: number, "\(propertyName) has no ':' before its value")
        }
        let value = String(decoding: bytes[(index + 1)...], as: UTF8.self)
        return ICalendarProperty(propertyName, value, parameters: parameters, line: number)
    }

    /// The content line, folded so that no physical line is longer than 75 octets (never inside a UTF-8
    /// sequence), with CRLF.
    public var serialized: String {
        var line = name
        for key in parameters.keys.sorted() {
            let values = parameters[key] ?? []
            line += ";\(key)="
            line += values.map { v in v.contains(where: { ":;,".contains($0) }) ? "\"\(v)\"" : v }.joined(
                separator: ",")
        }
        line += ":" + value
        return Self.fold(line)
    }

    static func fold(_ line: String) -> String {
        let bytes = Array(line.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 70 * 3 + 2)
        var width = 0
        var index = 0
        while index < bytes.count {
            // The length of the UTF-8 sequence that starts here.
            let lead = bytes[index]
            let length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
            if width + length > 75 {
                out += [0x0D, 0x0A, 0x20]
                width = 1
            }
            out += bytes[index..<min(bytes.count, index + length)]
            width += length
            index += length
        }
        out += [0x0D, 0x0A]
        return String(decoding: out, as: UTF8.self)
    }

    /// TEXT escaping: backslash, semicolon, comma and newline.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            case "\n", "\r\n": out += "\\n"
            case "\r": break
            default: out.append(character)
            }
        }
        return out
    }

    public static func unescape(_ value: String) -> String {
        guard value.contains("\\") else { return value }
        var out = ""
        var escaped = false
        for character in value {
            if escaped {
                switch character {
                case "n", "N": out += "\n"
                default: out.append(character)
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                out.append(character)
            }
        }
        return out
    }
}

/// An iCalendar file that cannot be read, or a value in it that cannot be used: where and what.
public struct ICalendarError: Error, Hashable, Sendable, CustomStringConvertible {
    /// 1-based; 0 when the file as a whole is meant.
    public var line: Int
    public var message: String

    public init(line: Int, _ message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { line > 0 ? "line \(line): \(message)" : message }
}
