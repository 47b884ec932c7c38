import Foundation

/// The weekday, date, time and list grammar of systemd's parser (parse_weekdays(), parse_date(),
/// parse_calendar_time(), prepend_component()), each failure reported where systemd would stop.
extension OnCalendarParser {
    // MARK: - Weekdays

    mutating func parseWeekdays() throws(RuleSyntaxError) {
        var rangeStart = -1
        var first = true
        var bits = 0
        defer { if bits != 0 { spec.weekdayBits = bits } }
        while true {
            let wordStart = pos
            guard let match = Self.dayNames.first(where: { hasPrefix($0.name, at: pos) }) else {
                if first { return }
                throw error(at: pos, expected: "a weekday such as Mon or Mon..Fri")
            }
            let skip = match.name.utf8.count
            guard [0, 0x2D, 0x2E, 0x2C, 0x20].contains(byte(pos + skip)) else {
                throw error(at: wordStart, expected: "a weekday such as Mon or Monday, then ',', '..' or a space")
            }
            bits |= 1 << match.number
            if rangeStart >= 0 {
                if rangeStart > match.number {
                    let from = OnCalendarFormatter.weekdayNames[rangeStart]
                    throw error(
                        at: wordStart, length: skip,
                        expected: "a weekday from \(from) to Sun (weekday ranges run Mon..Sun)")
                }
                var j = rangeStart + 1
                while j < match.number {
                    bits |= 1 << j
                    j += 1
                }
            }
            pos += skip
            switch byte(pos) {
            case 0:
                return
            case 0x20:
                skipSpaces()
                return
            case 0x2E:
                if rangeStart >= 0 {
                    throw error(at: pos, length: 2, expected: "',' or a space after a weekday range")
                }
                guard byte(pos + 1) == 0x2E else {
                    throw error(at: pos, length: 1, expected: "'..' between two weekdays")
                }
                rangeStart = match.number
                pos += 2
            case 0x2D:
                if rangeStart >= 0 {
                    throw error(at: pos, length: 1, expected: "',' or a space after a weekday range")
                }
                rangeStart = match.number
                pos += 1
            default:  // ','
                rangeStart = -1
                pos += 1
            }
            if byte(pos) == 0 || byte(pos) == 0x20 {
                let closing = pos
                skipSpaces()
                if rangeStart >= 0 {
                    throw error(at: closing, length: 0, expected: "a weekday closing the range, such as Fri")
                }
                return
            }
            first = false
        }
    }

    // MARK: - Date

    /// Returns true for `@timestamp`, which stands for a whole date and time.
    mutating func parseDate() throws(RuleSyntaxError) -> Bool {
        if byte(pos) == 0 { return false }
        if byte(pos) == 0x40 {
            try parseTimestamp()
            return true
        }
        let firstStart = pos
        let b = byte(pos)
        if (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) {
            throw error(
                at: pos,
                expected: "a weekday (Mon), a date (2024-*-01), a time (10:00) or a shorthand (daily, weekly, …)")
        }
        let first = try parseChain(seconds: false)
        if byte(pos) == 0 || byte(pos) == 0x3A {
            pos = firstStart  // it was an hour: let parseTime() read it again
            return false
        }
        if byte(pos) == 0x7E {
            spec.endOfMonth = true
        } else if byte(pos) != 0x2D {
            throw error(at: pos, expected: "'-' between date fields, ':' between time fields, or a list such as 1,2")
        }
        pos += 1
        let second = try parseChain(seconds: false)
        if byte(pos) == 0 || byte(pos) == 0x20 {
            skipSpaces()
            assign(first, to: .month)
            assign(second, to: .day)
            return false
        }
        if spec.endOfMonth {
            throw error(at: pos, expected: "a space after MONTH~DAY ('~' cannot follow a year)")
        }
        if byte(pos) == 0x7E {
            spec.endOfMonth = true
        } else if byte(pos) != 0x2D {
            throw error(at: pos, expected: "'-' or '~' before the day")
        }
        pos += 1
        let third = try parseChain(seconds: false)
        guard byte(pos) == 0 || byte(pos) == 0x20 else {
            throw error(at: pos, expected: "a space between the date and the time")
        }
        skipSpaces()
        assign(first, to: .year)
        assign(second, to: .month)
        assign(third, to: .day)
        return false
    }

    /// `@SECONDS`: read like strtoul() (leading blanks and a sign allowed), then turned into a UTC date.
    mutating func parseTimestamp() throws(RuleSyntaxError) {
        let at = pos
        var k = pos + 1
        while [0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D].contains(byte(k)) { k += 1 }
        var negative = false
        if byte(k) == 0x2B || byte(k) == 0x2D {
            negative = byte(k) == 0x2D
            k += 1
        }
        guard Self.isDigit(byte(k)) else {
            throw error(at: pos + 1, expected: "seconds since 1970-01-01 UTC after '@', such as @1700000000")
        }
        var value: UInt64 = 0
        var overflow = false
        while Self.isDigit(byte(k)) {
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(byte(k) - 0x30))
            overflow = overflow || o1 || o2
            value = a
            k += 1
        }
        let seconds = Int64(bitPattern: negative ? 0 &- value : value)
        let latest = Int64(LocalDateTime.days(fromCivil: CalendarSpec.maximumYear + 1, 1, 1)) * 86_400
        guard !overflow, seconds >= 0, seconds < latest else {
            throw error(
                at: at, length: k - at,
                expected: "a timestamp from @0 (1970) up to the end of 2199")
        }
        let t = Int(seconds)
        let dateTime = LocalDateTime(daysSinceEpoch: t / 86_400, secondsIntoDay: t % 86_400)
        func one(_ v: Int) -> [OnCalendarComponent] { [OnCalendarComponent(start: v, stop: -1, repetition: 0)] }
        spec.year = one(dateTime.year)
        spec.month = one(dateTime.month)
        spec.day = one(dateTime.day)
        spec.hour = one(dateTime.hour)
        spec.minute = one(dateTime.minute)
        spec.microsecond = one(dateTime.second * Self.microsecondsPerSecond)
        spec.isUTC = true
        pos = k
    }

    // MARK: - Time

    /// A space followed by more text where the time should end: most likely an unknown zone name.
    func unknownZoneError() -> RuleSyntaxError? {
        guard byte(pos) == 0x20 else { return nil }
        var word = pos
        while byte(word) == 0x20 { word += 1 }
        guard word < end else { return nil }
        return error(
            at: word, length: end - word,
            expected: "a time zone such as UTC or Europe/Berlin (this one is unknown), or the end of the expression")
    }

    mutating func parseTime() throws(RuleSyntaxError) {
        let zero = [
            OnCalendarWrittenComponent(component: .init(start: 0, stop: -1, repetition: 0), offset: pos, length: 0)
        ]
        if byte(pos) == 0 {
            assign(zero, to: .hour)
            assign(zero, to: .minute)
            assign(zero, to: .second)
            return
        }
        let hour = try parseChain(seconds: false)
        guard byte(pos) == 0x3A else {
            throw unknownZoneError() ?? error(at: pos, expected: "':' between the hour and the minute")
        }
        pos += 1
        let minute = try parseChain(seconds: false)
        if byte(pos) == 0 {
            assign(hour, to: .hour)
            assign(minute, to: .minute)
            assign(zero, to: .second)
            return
        }
        guard byte(pos) == 0x3A else {
            throw unknownZoneError() ?? error(at: pos, expected: "':' between the minute and the second")
        }
        pos += 1
        let second = try parseChain(seconds: true)
        if byte(pos) != 0 {
            throw unknownZoneError() ?? error(at: pos, expected: "the end of the expression after the seconds")
        }
        assign(hour, to: .hour)
        assign(minute, to: .minute)
        assign(second, to: .second)
    }

    // MARK: - Lists

    /// nil result means `*`.
    mutating func parseChain(seconds: Bool) throws(RuleSyntaxError) -> [OnCalendarWrittenComponent]? {
        if byte(pos) == 0x2A {
            let star = pos
            pos += 1
            if seconds {
                let every = OnCalendarComponent(start: 0, stop: -1, repetition: Self.microsecondsPerSecond)
                return [OnCalendarWrittenComponent(component: every, offset: star, length: 1)]
            }
            return nil
        }
        var list: [OnCalendarWrittenComponent] = []
        var nesting = 0
        while true {
            if nesting > Self.maximumListNesting {
                throw error(at: pos, expected: "at most \(Self.maximumListNesting + 1) values in one list")
            }
            let componentStart = pos
            let start = try parseNumber(
                seconds: seconds, expected: "a number, a range such as 1..5, a repetition such as 0/15, or *")
            var stop = -1
            var repetition = 0
            if byte(pos) == 0x2E && byte(pos + 1) == 0x2E {
                pos += 2
                stop = try parseNumber(seconds: seconds, expected: "a number ending the range")
                repetition = seconds ? Self.microsecondsPerSecond : 1
            }
            if byte(pos) == 0x2F {
                pos += 1
                let repetitionStart = pos
                repetition = try parseNumber(seconds: seconds, expected: "a repetition interval such as /2")
                if repetition == 0 {
                    throw error(at: repetitionStart, expected: "a repetition interval greater than 0")
                }
            } else {
                if start > Self.int32Max - repetition {
                    throw error(at: componentStart, length: pos - componentStart, expected: "a smaller number")
                }
                if seconds && stop >= 0 && start + repetition > stop {
                    throw error(
                        at: componentStart, length: pos - componentStart,
                        expected: "a seconds range at least one second long, or one with a repetition such as /0.5")
                }
            }
            guard [0, 0x20, 0x2C, 0x2D, 0x7E, 0x3A].contains(byte(pos)) else {
                throw error(at: pos, expected: "',' '-' ':' or a space after a value, such as 1,2 or 1..5 or 0/15")
            }
            list.append(
                OnCalendarWrittenComponent(
                    component: OnCalendarComponent(start: start, stop: stop, repetition: repetition),
                    offset: componentStart, length: pos - componentStart))
            if byte(pos) != 0x2C { return list }
            pos += 1
            nesting += 1
        }
    }

    /// systemd's parse_component_decimal(): digits (strtoul), and for seconds an optional fraction rounded
    /// to microseconds.
    mutating func parseNumber(seconds: Bool, expected: String) throws(RuleSyntaxError) -> Int {
        guard Self.isDigit(byte(pos)) else { throw error(at: pos, expected: expected) }
        let numberStart = pos
        var value: UInt64 = 0
        var overflow = false
        while Self.isDigit(byte(pos)) {
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(byte(pos) - 0x30))
            overflow = overflow || o1 || o2
            value = a
            pos += 1
        }
        if !overflow && seconds {
            let (scaled, o) = value.multipliedReportingOverflow(by: UInt64(Self.microsecondsPerSecond))
            overflow = o
            value = scaled
            if byte(pos) == 0x2E && byte(pos + 1) != 0x2E {
                pos += 1
                let fraction = try parseFraction()
                let (sum, o2) = value.addingReportingOverflow(UInt64(fraction))
                overflow = overflow || o2
                value = sum
            }
        }
        if overflow || value > UInt64(Self.int32Max) {
            throw error(at: numberStart, length: pos - numberStart, expected: "a smaller number")
        }
        return Int(value)
    }

    /// systemd's parse_fractional_part_u(…, 6, …): six digits, rounded half up on the seventh, the rest
    /// ignored; at least one digit required.
    mutating func parseFraction() throws(RuleSyntaxError) -> Int {
        var value = 0
        var i = 0
        while i < 6 {
            if !Self.isDigit(byte(pos)) {
                if i == 0 { throw error(at: pos, expected: "digits after the decimal point") }
                while i < 6 {
                    value *= 10
                    i += 1
                }
                break
            }
            value = value * 10 + Int(byte(pos) - 0x30)
            pos += 1
            i += 1
        }
        if byte(pos) >= 0x35 && byte(pos) <= 0x39 { value += 1 }
        while Self.isDigit(byte(pos)) { pos += 1 }
        return value
    }

    mutating func assign(_ list: [OnCalendarWrittenComponent]?, to field: OnCalendarField) {
        written[field] = list
    }
}
