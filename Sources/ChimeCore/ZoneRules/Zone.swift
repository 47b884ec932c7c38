import Foundation

/// A time zone as Chime computes wall-clock times in it: a name of the system's tz database
/// (`Europe/Berlin`, read through `ZoneRulesStore`), or a fixed offset from UTC.
///
/// Foundation's `TimeZone` knows only the zones of the tz database copy compiled into its ICU, so a zone
/// that a `tzdata` upgrade adds would be refused, and every look-up by name runs ICU's code. A `Zone` is
/// its name: its rules are read from the database each time they are used, so a running chimed follows a
/// change of the database (`ZoneRulesStore.reload(_:)`) without remaking its zones. Foundation's zones are
/// asked only on a system without the database (no `tzdata`).
public struct Zone: Hashable, Sendable, CustomStringConvertible {
    /// `Europe/Berlin`, `UTC`, or `GMT+0530` for a fixed offset.
    public let identifier: String
    /// Seconds east of UTC for a fixed offset, nil for a zone of the database.
    public let fixedOffset: Int?
    /// The TZif file of a zone known only by its file (`/etc/localtime` copied rather than linked), nil
    /// for a zone of the database or a fixed offset.
    public let file: String?

    /// Coordinated Universal Time.
    public static let utc = Zone(name: "UTC", fixedOffset: 0)
    /// Greenwich Mean Time: UTC under the name Foundation gives it.
    public static let gmt = Zone(name: "GMT", fixedOffset: 0)

    private init(name: String, fixedOffset: Int?, file: String? = nil) {
        identifier = name
        self.fixedOffset = fixedOffset
        self.file = file
    }

    /// The zone whose rules are the TZif file at `path`, named `localtime`: what the system's zone is
    /// when `/etc/localtime` is a copy of a zone's file rather than a link to it (as a container that
    /// mounts its host's file sees it). Nil when the file is not a valid TZif file.
    public init?(localtimeFile path: String) {
        guard ZoneRulesStore.shared.rules(file: path) != nil else { return nil }
        self.init(name: "localtime", fixedOffset: nil, file: path)
    }

    /// The zone named `identifier`: a file of the system's tz database, `UTC`, `GMT`, or a fixed offset
    /// written as Foundation writes one (`GMT+0530`, `GMT-08`). Nil for any other name, as glibc reads
    /// one; only on a system without the database (no zone directory) is Foundation's copy asked, and a
    /// name it knows is taken under Foundation's name for it.
    public init?(identifier: String) {
        switch identifier {
        case "UTC": self = .utc
        case "GMT": self = .gmt
        default:
            if let offset = Self.fixedOffset(named: identifier) {
                self.init(name: identifier, fixedOffset: offset)
            } else if ZoneRulesStore.shared.rules(named: identifier) != nil {
                self.init(name: identifier, fixedOffset: nil)
            } else if !ZoneRulesStore.shared.hasDatabase, let foundation = TimeZone(identifier: identifier) {
                // Under the name Foundation gives it: `GMT+5` is its `GMT+0500`, a fixed offset.
                let name = foundation.identifier
                if name == "GMT" || name == "UTC" {
                    self = name == "GMT" ? .gmt : .utc
                } else {
                    self.init(name: name, fixedOffset: Self.fixedOffset(named: name))
                }
            } else {
                return nil
            }
        }
    }

    /// A fixed offset from UTC, named as Foundation names one (`GMT+0530`; `GMT` for 0).
    public init(secondsFromGMT offset: Int) {
        guard offset != 0 else {
            self = .gmt
            return
        }
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let magnitude = abs(offset)
        var name = "GMT" + (offset < 0 ? "-" : "+") + two(magnitude / 3600) + two(magnitude / 60 % 60)
        if magnitude % 60 != 0 { name += two(magnitude % 60) }
        self.init(name: name, fixedOffset: offset)
    }

    /// The zone a Foundation `TimeZone` names (ChimeKit's API takes Foundation's zones): its name when this
    /// system knows it, else its offset now.
    public init(_ zone: TimeZone) {
        if let named = Zone(identifier: zone.identifier) {
            self = named
        } else {
            self.init(secondsFromGMT: zone.secondsFromGMT())
        }
    }

    /// The offset `GMT±HH[MM[SS]]` names, nil for any other name.
    static func fixedOffset(named name: String) -> Int? {
        let bytes = Array(name.utf8)
        guard bytes.count >= 6, bytes.count.isMultiple(of: 2), name.hasPrefix("GMT+") || name.hasPrefix("GMT-")
        else { return nil }
        var parts: [Int] = []
        var index = 4
        while index < bytes.count {
            let high = Int(bytes[index]) - 48
            let low = Int(bytes[index + 1]) - 48
            guard (0...9).contains(high), (0...9).contains(low) else { return nil }
            parts.append(high * 10 + low)
            index += 2
        }
        guard parts.count <= 3, parts[0] <= 18, parts.dropFirst().allSatisfy({ $0 < 60 }) else { return nil }
        let seconds = parts[0] * 3600 + (parts.count > 1 ? parts[1] * 60 : 0) + (parts.count > 2 ? parts[2] : 0)
        return bytes[3] == UInt8(ascii: "-") ? -seconds : seconds
    }

    /// The system's zone as it is now: `TZ` when set (`Europe/Berlin`, `:Europe/Berlin`); else the zone
    /// `localtime` links to (`…/zoneinfo/Europe/Berlin`); else `/etc/timezone`; else the rules in the
    /// `localtime` file itself (a copy rather than a link); else Foundation's idea; else UTC. Read each
    /// time, so a change of the system's zone is seen.
    public static func system(
        localtime: String = "/etc/localtime", environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Zone {
        if let tz = environment["TZ"], !tz.isEmpty {
            let name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if let zone = Zone(identifier: name) { return zone }
        }
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: localtime),
            let range = target.range(of: "zoneinfo/"),
            let zone = Zone(identifier: String(target[range.upperBound...]))
        {
            return zone
        }
        if localtime == "/etc/localtime",
            let name = try? String(contentsOfFile: "/etc/timezone", encoding: .utf8),
            let zone = Zone(identifier: name.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            return zone
        }
        if let zone = Zone(localtimeFile: localtime) { return zone }
        return Zone(TimeZone.current)
    }

    /// The system's zone now (`system()`).
    public static var current: Zone { system() }

    /// Seconds east of UTC at `date`.
    public func secondsFromGMT(for date: Date) -> Int { WallClock.utcOffset(at: date, in: self) }

    /// The abbreviation in use at `date` (`CET`, `CEST`, `+0530`).
    public func abbreviation(for date: Date) -> String? {
        let abbreviation = WallClock.localTimeType(at: date, in: self).abbreviation
        return abbreviation.isEmpty ? nil : abbreviation
    }

    /// Whether `date` falls in daylight saving time.
    public func isDaylightSavingTime(for date: Date) -> Bool {
        WallClock.localTimeType(at: date, in: self).isDaylightSaving
    }

    public var description: String { identifier }
}

extension Zone: Codable {
    private enum CodingKeys: String, CodingKey { case identifier }

    /// Encoded as Foundation encodes a `TimeZone` (`{"identifier": "Europe/Berlin"}`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let identifier = try container.decode(String.self, forKey: .identifier)
        guard let zone = Zone(identifier: identifier) else {
            throw DecodingError.dataCorruptedError(
                forKey: .identifier, in: container, debugDescription: "Unknown time zone \(identifier)")
        }
        self = zone
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
    }
}
