import Foundation

/// Which field of the expression a list belongs to; used to validate ranges and to explain errors.
enum OnCalendarField: Int, CaseIterable, Sendable {
    case year, month, day, hour, minute, second

    /// systemd's accepted range for the field (seconds in microseconds).
    var bounds: ClosedRange<Int> {
        switch self {
        case .year: return CalendarSpec.minimumYear...CalendarSpec.maximumYear
        case .month: return 1...12
        case .day: return 1...31
        case .hour: return 0...23
        case .minute: return 0...59
        case .second: return 0...(60 * 1_000_000 - 1)
        }
    }

    var expectation: String {
        switch self {
        case .year: return "a year 1970–2199 (two digits: 70–99 mean 1970–1999, 00–69 mean 2000–2069)"
        case .month: return "a month 1–12"
        case .day: return "a day 1–31"
        case .hour: return "an hour 0–23"
        case .minute: return "a minute 0–59"
        case .second: return "a second 0–59 (fractions allowed, such as 7.5)"
        }
    }
}

/// One list element as written, remembered so validation errors can point at it.
struct OnCalendarWrittenComponent: Sendable {
    var component: OnCalendarComponent
    var offset: Int
    var length: Int
}

/// A faithful port of systemd 252's calendar_spec_from_string(): it accepts exactly what systemd accepts
/// (the same quirks included, e.g. `Mon,` or `@ 5`) and rejects the rest with the position and the reason.
///
/// It works on UTF-8 bytes, like the C code; reads past the end see 0, like a C string's terminator.
struct OnCalendarParser {
    static let grammar = "OnCalendar"
    static let dayNames: [(name: String, number: Int)] = [
        ("monday", 0), ("mon", 0), ("tuesday", 1), ("tue", 1), ("wednesday", 2), ("wed", 2),
        ("thursday", 3), ("thu", 3), ("friday", 4), ("fri", 4), ("saturday", 5), ("sat", 5),
        ("sunday", 6), ("sun", 6),
    ]
    static let maximumListNesting = 240
    static let int32Max = Int(Int32.max)
    static let microsecondsPerSecond = 1_000_000

    let text: String
    let bytes: [UInt8]
    /// End of the part still to parse (the zone suffix, once recognised, is cut off).
    var end: Int
    var pos = 0
    var spec = CalendarSpec()
    var written: [OnCalendarField: [OnCalendarWrittenComponent]] = [:]

    init(text: String) {
        self.text = text
        self.bytes = Array(text.utf8)
        self.end = bytes.count
    }

    // MARK: - Entry point

    mutating func parse(localZoneNames: [String]) throws(RuleSyntaxError) -> CalendarSpec {
        if let nul = bytes.firstIndex(of: 0) {
            throw error(at: nul, expected: "text without NUL characters")
        }
        stripTimeZone(localZoneNames: localZoneNames)
        if end == 0 {
            throw error(at: 0, expected: "a calendar expression such as daily or Mon..Fri *-*-* 09:00")
        }
        if !parseShorthand() {
            try parseWeekdays()
            let wasTimestamp = try parseDate()
            if !wasTimestamp { try parseTime() }
            if pos < end {
                throw error(at: pos, expected: "the end of the expression")
            }
        }
        try normalizeAndValidate()
        // `@SECONDS Europe/Berlin` (or `@SECONDS CET`) is read in UTC all the same: systemd checks utc first
        // and timegm() ignores tm_isdst. Drop the zone so equal events are equal values.
        if spec.isUTC {
            spec.timeZoneName = nil
            spec.daylightFlag = -1
            spec.localZoneAbbreviation = nil
        }
        return spec
    }

    // MARK: - Characters

    func byte(_ i: Int) -> UInt8 { i < end ? bytes[i] : 0 }

    static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    static func lower(_ b: UInt8) -> UInt8 { (b >= 0x41 && b <= 0x5A) ? b + 32 : b }

    func hasPrefix(_ word: String, at i: Int) -> Bool {
        var k = i
        for w in word.utf8 {
            guard k < end, Self.lower(bytes[k]) == Self.lower(w) else { return false }
            k += 1
        }
        return true
    }

    mutating func skipSpaces() {
        while byte(pos) == 0x20 { pos += 1 }
    }

    // MARK: - Errors

    /// The token at a byte offset: the run up to the next separator, or the single separator character.
    func error(at byteOffset: Int, expected: String) -> RuleSyntaxError {
        let separators: Set<UInt8> = [0x20, 0x2C, 0x2D, 0x3A, 0x2E, 0x2F, 0x7E]
        var stop = byteOffset
        if byteOffset < bytes.count {
            if separators.contains(bytes[byteOffset]) {
                stop = byteOffset + 1
            } else {
                while stop < bytes.count && !separators.contains(bytes[stop]) { stop += 1 }
            }
        }
        return error(at: byteOffset, length: stop - byteOffset, expected: expected)
    }

    func error(at byteOffset: Int, length: Int, expected: String) -> RuleSyntaxError {
        let clamped = min(max(byteOffset, 0), bytes.count)
        let tokenEnd = min(clamped + max(length, 0), bytes.count)
        let offset = String(decoding: bytes[0..<clamped], as: UTF8.self).count
        let token = String(decoding: bytes[clamped..<tokenEnd], as: UTF8.self)
        return RuleSyntaxError(grammar: Self.grammar, input: text, offset: offset, token: token, expected: expected)
    }

    // MARK: - Time zone suffix

    /// systemd looks at the end first: ` UTC` (any case), then the local zone's two abbreviations (what
    /// glibc's tzname holds, passed in by the caller), then a last word that names a time zone.
    mutating func stripTimeZone(localZoneNames: [String]) {
        let utcSuffix = " utc"
        if end >= utcSuffix.utf8.count && hasPrefix(utcSuffix, at: end - utcSuffix.utf8.count) {
            spec.isUTC = true
            end -= utcSuffix.utf8.count
            return
        }
        for (j, name) in localZoneNames.prefix(2).enumerated() where !name.isEmpty {
            let n = name.utf8.count
            guard end > n, hasPrefix(name, at: end - n), bytes[end - n - 1] == 0x20 else { continue }
            spec.daylightFlag = j
            spec.localZoneAbbreviation = name
            end -= n + 1
            return
        }
        guard let lastSpace = bytes[0..<end].lastIndex(of: 0x20) else { return }
        let candidate = String(decoding: bytes[(lastSpace + 1)..<end], as: UTF8.self)
        if OnCalendarTimeZoneNames.isValid(candidate) {
            spec.timeZoneName = candidate
            end = lastSpace
        }
    }

    // MARK: - Shorthands

    mutating func parseShorthand() -> Bool {
        let body = String(decoding: bytes[0..<end], as: UTF8.self).lowercased()
        let zero = [OnCalendarComponent(start: 0, stop: -1, repetition: 0)]
        func one(_ v: Int) -> OnCalendarComponent { OnCalendarComponent(start: v, stop: -1, repetition: 0) }
        guard body.utf8.allSatisfy({ $0 < 0x80 }) else { return false }
        switch body {
        case "minutely":
            spec.microsecond = zero
        case "hourly":
            spec.minute = zero
            spec.microsecond = zero
        case "daily":
            spec.hour = zero
            spec.minute = zero
            spec.microsecond = zero
        case "monthly":
            spec.day = [one(1)]
            spec.hour = zero
            spec.minute = zero
            spec.microsecond = zero
        case "annually", "yearly", "anually":
            spec.month = [one(1)]
            spec.day = [one(1)]
            spec.hour = zero
            spec.minute = zero
            spec.microsecond = zero
        case "weekly":
            spec.weekdayBits = 1
            spec.hour = zero
            spec.minute = zero
            spec.microsecond = zero
        case "quarterly":
            spec.month = [one(1), one(4), one(7), one(10)]
            spec.day = [one(1)]
            spec.hour = zero
            spec.minute = zero
            spec.microsecond = zero
        case "biannually", "bi-annually", "semiannually", "semi-annually":
            spec.month = [one(1), one(7)]
            spec.day = [one(1)]
            spec.hour = zero
            spec.minute = zero
            spec.microsecond = zero
        default:
            return false
        }
        return true
    }
}
