import Foundation

extension CalendarSpec {
    /// The two abbreviations glibc gives the system zone (its `tzname`), such as `CET`/`CEST`.
    ///
    /// systemd lets an expression end in one of them (`Mon 10:00 CEST`); that pins `tm_isdst` and prints the
    /// abbreviation back. Foundation's abbreviations differ from glibc's, so the caller supplies them (on
    /// Linux: `tzname` after `tzset()`, for the zone the daemon runs in).
    public struct LocalZoneAbbreviations: Hashable, Sendable, Codable {
        /// tzname[0].
        public var standard: String
        /// tzname[1] (the same as `standard` in zones without daylight saving time).
        public var daylight: String

        /// Both names as glibc reports them, e.g. `CET` and `CEST`; pass the same name twice without DST.
        public init(standard: String, daylight: String) {
            self.standard = standard
            self.daylight = daylight
        }
    }

    /// Parses an `OnCalendar=` expression as systemd 252 does (systemd.time(7)): weekdays, `Y-M-D`,
    /// `h:m[:s]` with `*`, lists, ranges, `/` repetitions, `~` (days from the month's end), fractional
    /// seconds, the shorthands (`daily`, `weekly`, …), `@SECONDS`, and a trailing `UTC` or IANA zone.
    ///
    /// - Parameter localZone: the system zone's abbreviations, to accept `… CET` the way systemd does; when
    ///   nil, a trailing abbreviation is only accepted if it is also a zone name (as `CET` is).
    /// - Throws: `RuleSyntaxError` (grammar "OnCalendar") for everything systemd rejects, with the offending
    ///   token, its offset and what would have been valid there.
    public static func parse(
        _ text: String, localZone: LocalZoneAbbreviations? = nil
    ) throws(RuleSyntaxError) -> CalendarSpec {
        var parser = OnCalendarParser(text: text)
        let names = localZone.map { [$0.standard, $0.daylight] } ?? []
        return try parser.parse(localZoneNames: names)
    }
}

/// Encoded as the normalised expression (a string) that parses back to an equal value — systemd's
/// normalised form, except that a seconds list systemd abbreviates to `*` is spelled out. An expression that
/// ends in a local zone abbreviation is encoded with that abbreviation so it can be read back anywhere.
extension CalendarSpec: Codable {
    private enum CodingKeys: String, CodingKey {
        case expression, localZoneAbbreviation, isDaylight
    }

    /// Reads the string form (or, for a local abbreviation, the keyed form) and parses it again, so a
    /// stored value that systemd would reject fails to decode instead of misbehaving later.
    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let text = try? single.decode(String.self) {
            do {
                self = try CalendarSpec.parse(text)
            } catch {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: error.description, underlyingError: error))
            }
            return
        }
        let keyed = try decoder.container(keyedBy: CodingKeys.self)
        let text = try keyed.decode(String.self, forKey: .expression)
        let abbreviation = try keyed.decode(String.self, forKey: .localZoneAbbreviation)
        let isDaylight = try keyed.decode(Bool.self, forKey: .isDaylight)
        let zone = LocalZoneAbbreviations(
            standard: isDaylight ? "" : abbreviation, daylight: isDaylight ? abbreviation : "")
        do {
            self = try CalendarSpec.parse(text, localZone: zone)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .expression, in: keyed, debugDescription: error.description)
        }
    }

    /// Writes the exact normalised expression (see the type's note on Codable).
    public func encode(to encoder: any Encoder) throws {
        if daylightFlag >= 0, let abbreviation = localZoneAbbreviation {
            var keyed = encoder.container(keyedBy: CodingKeys.self)
            try keyed.encode(OnCalendarFormatter.format(self, exact: true), forKey: .expression)
            try keyed.encode(abbreviation, forKey: .localZoneAbbreviation)
            try keyed.encode(daylightFlag == 1, forKey: .isDaylight)
        } else {
            var single = encoder.singleValueContainer()
            try single.encode(OnCalendarFormatter.format(self, exact: true))
        }
    }
}
