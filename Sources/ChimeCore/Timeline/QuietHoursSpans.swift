import Foundation

extension QuietHours {
    /// Checks that both times are valid and differ; the message says what to change.
    public func validate() throws(ContentError) {
        for (name, time) in [("start", start), ("end", end)] where time.secondsIntoDay == nil {
            throw ContentError("the quiet hours \(name) \(time) is not a time of day; write HH:MM from 00:00 to 23:59")
        }
        guard start != end else {
            throw ContentError(
                "the quiet hours start and end are both \(start), so they would never be quiet; "
                    + "give two different times, e.g. 22:00 to 07:00")
        }
    }

    /// Whether `date` lies inside quiet hours on the wall clock of `timeZone`: from `start` (inclusive)
    /// to `end` (exclusive), across midnight when `start` is after `end`. Equal or invalid times are never
    /// quiet.
    ///
    /// On a day the clocks change, a span runs between the instants its times name, as `WallClock` reads
    /// them under the default `DSTPolicy`: a time inside a spring-forward gap is the end of the gap, a time
    /// inside a fall-back overlap its first instant. So quiet hours that end at 02:30 on the night 02:00–03:00
    /// repeats end the first time the clock reads 02:30, and the repeated half hour is not quiet again.
    public func contains(_ date: Date, timeZone: Zone) -> Bool {
        span(containing: date, timeZone: timeZone) != nil
    }

    /// The instant the quiet span containing `date` ends; nil when `date` is not inside quiet hours.
    /// The end is read as `contains(_:timeZone:)` describes.
    public func end(of date: Date, timeZone: Zone) -> Date? {
        span(containing: date, timeZone: timeZone)?.upperBound
    }

    /// The span, as instants, that contains `date`.
    func span(containing date: Date, timeZone: Zone) -> Range<Date>? {
        guard let from = start.secondsIntoDay, let to = end.secondsIntoDay, from != to else { return nil }
        // A span lasts less than a day, so only instants within a day of `date` matter. When the offset is
        // the same throughout, they read straight off the wall clock; this is the case but for two days a
        // year and costs a handful of zone look-ups instead of six full resolutions.
        let window: TimeInterval = 26 * 3600
        let offset = WallClock.utcOffset(at: date, in: timeZone)
        guard WallClock.utcOffset(at: date - window, in: timeZone) == offset,
            WallClock.utcOffset(at: date + window, in: timeZone) == offset,
            WallClock.transitions(in: timeZone, from: date - window, through: date + window).isEmpty
        else { return spanBySearch(containing: date, from: from, to: to, timeZone: timeZone) }
        let local = WallClock.localDateTime(for: date, in: timeZone)
        let now = local.secondsIntoDay
        guard from < to ? (from <= now && now < to) : (now >= from || now < to) else { return nil }
        let startDay = from < to || now >= from ? local.daysSinceEpoch : local.daysSinceEpoch - 1
        let endDay = from < to ? startDay : startDay + 1
        func instant(_ day: Int, _ seconds: Int) -> Date {
            Date(timeIntervalSince1970: TimeInterval(day * 86_400 + seconds - offset))
        }
        return instant(startDay, from)..<instant(endDay, to)
    }

    /// The span containing `date`, found by resolving the spans that start around it: right on days the
    /// offset changes, where a span's ends may fall in a gap or an overlap.
    func spanBySearch(containing date: Date, from: Int, to: Int, timeZone: Zone) -> Range<Date>? {
        let day = WallClock.localDateTime(for: date, in: timeZone).daysSinceEpoch
        // The span containing `date` usually starts on its local day or the one before; the day after
        // can start before `date` only when a fall-back repeats the hour before midnight.
        for startDay in [day - 1, day, day + 1] {
            let spanStart = Self.instant(day: startDay, seconds: from, timeZone: timeZone)
            let spanEnd = Self.instant(day: from < to ? startDay : startDay + 1, seconds: to, timeZone: timeZone)
            if spanStart <= date && date < spanEnd { return spanStart..<spanEnd }
        }
        return nil
    }

    /// The instant a wall-clock time names under the default DST policy: the end of a gap, the first of
    /// an overlap.
    static func instant(day: Int, seconds: Int, timeZone: Zone) -> Date {
        switch WallClock.resolve(LocalDateTime(daysSinceEpoch: day, secondsIntoDay: seconds), in: timeZone) {
        case .unique(let instant): instant
        case .gap(let transition): transition
        case .overlap(let first, _): first
        }
    }
}
