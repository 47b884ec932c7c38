import Foundation

/// Decides whether the last word of an expression names a time zone, as systemd's timezone_is_valid()
/// does (a TZif file under /usr/share/zoneinfo) — but without reading files (ChimeCore does no I/O): the
/// name must pass systemd's spelling rules and be a zone Foundation knows under exactly that name.
///
/// Known differences, both rare: `right/…` (leap-second) zones are refused, because Foundation has no
/// leap-second data; and a zone newer than Foundation's tz data, or one removed from the system's tz data
/// but still known to ICU, is judged by Foundation.
enum OnCalendarTimeZoneNames {
    /// Spellings of UTC/GMT that the tz database ships as files but Foundation maps to another identifier.
    static let aliasesOfGMT: Set<String> = [
        "UTC", "GMT", "GMT+0", "GMT-0", "GMT0", "Etc/GMT+0", "Etc/GMT-0", "Etc/GMT0", "Etc/UTC", "Etc/GMT",
    ]

    /// Names ICU accepts that are no files in the tz database (Java-style abbreviations, zones removed
    /// from tzdata), so systemd refuses them.
    static let unknownToTzdata: Set<String> = [
        "ACT", "AET", "AGT", "ART", "AST", "BET", "BST", "CAT", "CNT", "CST", "CTT", "EAT", "ECT", "IET", "IST",
        "JST", "MIT", "NET", "NST", "PLT", "PNT", "PRT", "PST", "SST", "VST", "US/Pacific-New",
        "Canada/East-Saskatchewan",
    ]

    static func isValid(_ name: String) -> Bool {
        guard isWellFormed(name) else { return false }
        if name == "localtime" || name == "posixrules" { return true }
        let target = name.hasPrefix("posix/") ? String(name.dropFirst("posix/".count)) : name
        if aliasesOfGMT.contains(target) { return true }
        if unknownToTzdata.contains(target) || target.hasPrefix("SystemV/") || target.hasPrefix("right/") {
            return false
        }
        guard let zone = Zone(identifier: target) else { return false }
        // Only a name the database has a file for keeps its spelling (without the database, Foundation's
        // ad-hoc "GMT+5" comes back as "GMT+0500", which systemd would refuse).
        return zone.identifier == target
    }

    /// The zone a valid name stands for. `localtime` is the system's zone (a link to /etc/localtime),
    /// `posixrules` is Debian's link to America/New_York, `posix/X` is X.
    static func zone(named name: String, systemZone: Zone) -> Zone? {
        if name == "localtime" { return systemZone }
        if name == "posixrules" { return Zone(identifier: "America/New_York") }
        let target = name.hasPrefix("posix/") ? String(name.dropFirst("posix/".count)) : name
        if aliasesOfGMT.contains(target) { return .gmt }
        return Zone(identifier: target)
    }

    /// systemd's character rules: letters, digits, '-', '_', '+', '/'; no leading, trailing or doubled '/'.
    static func isWellFormed(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count < 4096, name.utf8.first != UInt8(ascii: "/") else { return false }
        var previousWasSlash = false
        for b in name.utf8 {
            let isAlphanumeric =
                (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z"))
                || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
            guard
                isAlphanumeric || b == UInt8(ascii: "-") || b == UInt8(ascii: "_") || b == UInt8(ascii: "+")
                    || b == UInt8(ascii: "/")
            else { return false }
            if b == UInt8(ascii: "/") {
                if previousWasSlash { return false }
                previousWasSlash = true
            } else {
                previousWasSlash = false
            }
        }
        return !previousWasSlash
    }
}
