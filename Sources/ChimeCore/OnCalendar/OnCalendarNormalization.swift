import Foundation

/// systemd's calendar_spec_normalize() and calendar_spec_valid(), with errors pointing at the written element.
extension OnCalendarParser {
    // MARK: - Normalisation and validation

    /// systemd's calendar_spec_normalize() followed by calendar_spec_valid(), reporting the first element
    /// (in reading order) that systemd would refuse.
    mutating func normalizeAndValidate() throws(RuleSyntaxError) {
        if spec.weekdayBits <= 0 || spec.weekdayBits >= 127 { spec.weekdayBits = -1 }
        if spec.endOfMonth && written[.day] == nil && spec.day == nil { spec.endOfMonth = false }

        var invalid: (OnCalendarWrittenComponent, OnCalendarField)?
        for field in OnCalendarField.allCases {
            guard let list = written[field] else { continue }
            var normalized: [(component: OnCalendarComponent, source: OnCalendarWrittenComponent)] = []
            for item in list {
                var c = item.component
                if field == .year { c = Self.expandTwoDigitYear(c) }
                normalized.append((Self.trimmed(c), item))
            }
            // Sort (keeping reading order among equals) and drop duplicates, as normalize_chain() does.
            var unique: [(component: OnCalendarComponent, source: OnCalendarWrittenComponent)] = []
            for entry in normalized.enumerated().sorted(by: { a, b in
                if a.element.component == b.element.component { return a.offset < b.offset }
                return OnCalendarComponent.precedes(a.element.component, b.element.component)
            }) where unique.last?.component != entry.element.component {
                unique.append(entry.element)
            }
            // chain_valid() walks the sorted list; for '~' days it lowers the limit by 3 at every element.
            let countsFromEnd = field == .day && spec.endOfMonth
            for (position, entry) in unique.enumerated()
            where !Self.isValid(entry.component, field: field, countsFromEnd: countsFromEnd, position: position) {
                if let earlier = invalid, earlier.0.offset <= entry.source.offset { continue }
                invalid = (entry.source, field)
            }
            let chain = unique.map(\.component)
            switch field {
            case .year: spec.year = chain
            case .month: spec.month = chain
            case .day: spec.day = chain
            case .hour: spec.hour = chain
            case .minute: spec.minute = chain
            case .second: spec.microsecond = chain
            }
        }
        for field in [OnCalendarField.year, .month, .day, .hour, .minute, .second] {
            spec.sortChain(field)
        }
        if let (item, field) = invalid {
            var expected = field.expectation
            if field == .day && spec.endOfMonth {
                expected =
                    "a day counted back from the month's end (1 is the last day): at most 28 for the first value,"
                    + " 25 for the second, 22 for the third… (systemd tightens the limit along the sorted list)"
            }
            expected += "; a repetition must fit in the field at least once and a range must run upwards"
            throw error(at: item.offset, length: item.length, expected: expected)
        }
    }

    static func expandTwoDigitYear(_ c: OnCalendarComponent) -> OnCalendarComponent {
        var c = c
        if c.start >= 0 && c.start < 70 { c.start += 2000 }
        if c.stop >= 0 && c.stop < 70 { c.stop += 2000 }
        if c.start >= 70 && c.start < 100 { c.start += 1900 }
        if c.stop >= 70 && c.stop < 100 { c.stop += 1900 }
        return c
    }

    /// The per-element part of normalize_chain(): shorten `stop` to the last value the repetition reaches,
    /// and turn ranges that hold a single value into that value.
    static func trimmed(_ c: OnCalendarComponent) -> OnCalendarComponent {
        var c = c
        if c.stop > c.start && c.repetition > 0 {
            c.stop -= (c.stop - c.start) % c.repetition
        }
        if (c.stop > c.start && c.repetition > 0 && c.start + c.repetition > c.stop) || c.start == c.stop {
            c.repetition = 0
            c.stop = -1
        }
        return c
    }

    static func sortedUnique(_ list: [OnCalendarComponent]) -> [OnCalendarComponent] {
        var out: [OnCalendarComponent] = []
        for c in list.sorted(by: OnCalendarComponent.precedes) where out.last != c {
            out.append(c)
        }
        return out
    }

    /// chain_valid() for the element at `position` of the sorted list. systemd subtracts 3 from the upper
    /// limit of a `~` day list once per element visited (its recursion reuses the lowered limit), so later
    /// elements face a tighter bound: `*-*~03,04` is valid, `*-*~14,26` is not.
    static func isValid(_ c: OnCalendarComponent, field: OnCalendarField, countsFromEnd: Bool, position: Int) -> Bool {
        let from = field.bounds.lowerBound
        var to = field.bounds.upperBound
        if countsFromEnd { to -= 3 * (position + 1) }
        guard to >= from else { return false }
        if c.start < from || c.start > to { return false }
        if c.repetition > to - from { return false }
        if c.stop >= 0 {
            if c.stop < from || c.stop > to { return false }
            if c.start + c.repetition > c.stop { return false }
        } else {
            if countsFromEnd && c.start - c.repetition < from { return false }
            if !countsFromEnd && c.start + c.repetition > to { return false }
        }
        return true
    }
}

extension CalendarSpec {
    /// Sorts a list the way normalize_chain() does (shorthands build their lists unsorted).
    mutating func sortChain(_ field: OnCalendarField) {
        switch field {
        case .year: year = year.map(OnCalendarParser.sortedUnique)
        case .month: month = month.map(OnCalendarParser.sortedUnique)
        case .day: day = day.map(OnCalendarParser.sortedUnique)
        case .hour: hour = hour.map(OnCalendarParser.sortedUnique)
        case .minute: minute = minute.map(OnCalendarParser.sortedUnique)
        case .second: microsecond = microsecond.map(OnCalendarParser.sortedUnique)
        }
    }
}
