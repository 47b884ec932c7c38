import Foundation

@testable import ChimeCore

/// What `systemd-analyze calendar` said about one expression.
enum OnCalendarOracleVerdict: Equatable, CustomStringConvertible {
    /// "Failed to parse calendar specification".
    case rejected
    /// Parsed, but "Failed to determine next elapse" (systemd's search gave up).
    case searchFailed
    /// Parsed: the normalised form and the elapses it printed (whole seconds since 1970, UTC).
    case accepted(normalized: String, elapses: [Int])

    var description: String {
        switch self {
        case .rejected: return "rejected"
        case .searchFailed: return "search failed"
        case .accepted(let normalized, let elapses):
            return "\"\(normalized)\" \(elapses.map(OnCalendarOracle.iso))"
        }
    }
}

/// Runs the real `systemd-analyze calendar` (systemd 252 here) over many expressions in ONE process and
/// reads back, per expression, the normalised form and the next elapses.
enum OnCalendarOracle {
    static let executable = "/usr/bin/systemd-analyze"

    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    /// `base` is in whole seconds, or with a fraction (microseconds) when `baseMicroseconds` is given.
    static func run(
        _ expressions: [String], timeZone: String, baseMicroseconds: Int, iterations: Int
    ) throws -> [OnCalendarOracleVerdict] {
        guard !expressions.isEmpty else { return [] }
        let seconds = baseMicroseconds / 1_000_000
        let fraction = baseMicroseconds % 1_000_000
        let base = fraction == 0 ? "@\(seconds)" : "@\(seconds).\(OnCalendarFormatter.padded(fraction, width: 6))"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "oncalendar-oracle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("out")
        let errURL = directory.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["calendar", "--iterations=\(iterations)", "--base-time=\(base)", "--"] + expressions
        process.environment = [
            "TZ": timeZone, "LANG": "C", "LC_ALL": "C", "PATH": "/usr/bin:/bin", "SYSTEMD_COLORS": "0",
        ]
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        let stdout = String(decoding: try Data(contentsOf: outURL), as: UTF8.self)
        let stderr = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        return try parse(stdout: stdout, stderr: stderr, expressions: expressions)
    }

    struct OutputMismatch: Error, CustomStringConvertible {
        var description: String
    }

    /// Each expression prints a table (or nothing when it fails), and a blank line separates expressions.
    static func parse(stdout: String, stderr: String, expressions: [String]) throws -> [OnCalendarOracleVerdict] {
        let lines = stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var index = 0
        var verdicts: [OnCalendarOracleVerdict] = []
        for expression in expressions {
            var table: [String] = []
            while index < lines.count && !lines[index].isEmpty {
                table.append(lines[index])
                index += 1
            }
            index += 1  // the separating blank line
            if table.isEmpty {
                if stderr.contains("Failed to parse calendar specification '\(expression)'") {
                    verdicts.append(.rejected)
                } else if stderr.contains("Failed to determine next elapse for '\(expression)'") {
                    verdicts.append(.searchFailed)
                } else {
                    throw OutputMismatch(description: "no output and no error for \(expression)\n\(stderr)")
                }
                continue
            }
            verdicts.append(try parseTable(table, expression: expression))
        }
        return verdicts
    }

    static func parseTable(_ table: [String], expression: String) throws -> OnCalendarOracleVerdict {
        var normalized: String?
        var elapses: [Int] = []
        var pendingLocal: Int?
        func flush() {
            if let local = pendingLocal { elapses.append(local) }
            pendingLocal = nil
        }
        for line in table {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = String(line[line.index(after: colon)...].dropFirst())
            switch key {
            case "Normalized form":
                normalized = value
            case "Next elapse", "Iter. #2", "Iter. #3", "Iter. #4", "Iter. #5", "Iter. #6", "Iter. #7", "Iter. #8":
                flush()
                if value == "never" { continue }
                // Printed in local time; exact only when the zone is UTC (then no "(in UTC)" line follows).
                pendingLocal = value.hasSuffix(" UTC") ? try timestamp(value) : Int.min
            case "(in UTC)":
                pendingLocal = try timestamp(value)
            default:
                if key.hasPrefix("Iter. #") {
                    flush()
                    pendingLocal = value.hasSuffix(" UTC") ? try timestamp(value) : Int.min
                }
            }
        }
        flush()
        guard let normalized else { throw OutputMismatch(description: "no normalized form for \(expression)") }
        if elapses.contains(Int.min) { throw OutputMismatch(description: "unreadable elapse for \(expression)") }
        return .accepted(normalized: normalized, elapses: elapses)
    }

    /// "Wed 2023-11-15 09:00:00 UTC" → seconds since 1970.
    static func timestamp(_ text: String) throws -> Int {
        let parts = text.split(separator: " ")
        guard parts.count == 4, parts[3] == "UTC",
            let local = LocalDateTime(iso: "\(parts[1])T\(parts[2])")
        else { throw OutputMismatch(description: "bad timestamp \(text)") }
        return local.secondsSinceEpoch
    }

    static func iso(_ seconds: Int) -> String {
        let days = Int((Double(seconds) / 86_400).rounded(.down))
        return LocalDateTime(daysSinceEpoch: days, secondsIntoDay: seconds - days * 86_400).description + "Z"
    }
}

/// Our side of a comparison: the same shape as the oracle's verdict.
enum OnCalendarOurs {
    static func verdict(
        _ expression: String, timeZone: String, baseMicroseconds: Int, iterations: Int,
        localZone: CalendarSpec.LocalZoneAbbreviations? = nil
    ) -> OnCalendarOracleVerdict {
        // systemd always compares the end of the expression with the system zone's abbreviations.
        let names = localZone ?? abbreviations(timeZone)
        guard let spec = try? CalendarSpec.parse(expression, localZone: names) else { return .rejected }
        guard let zone = Zone(identifier: timeZone) else { return .rejected }
        var cursor = baseMicroseconds
        var elapses: [Int] = []
        for _ in 0..<iterations {
            switch spec.nextElapseOutcome(afterMicrosecond: cursor, defaultTimeZone: zone) {
            case .elapse(let usec):
                elapses.append(usec / 1_000_000)
                cursor = usec
            case .never:
                return .accepted(normalized: spec.description, elapses: elapses)
            case .gaveUp:
                return .searchFailed
            }
        }
        return .accepted(normalized: spec.description, elapses: elapses)
    }

    /// glibc's tzname for the zones the tests use (what `python3 -c 'import time; print(time.tzname)'` says).
    static func abbreviations(_ zone: String) -> CalendarSpec.LocalZoneAbbreviations {
        switch zone {
        case "Europe/Berlin": return .init(standard: "CET", daylight: "CEST")
        case "America/New_York": return .init(standard: "EST", daylight: "EDT")
        case "Australia/Lord_Howe": return .init(standard: "+1030", daylight: "+11")
        case "Asia/Kathmandu": return .init(standard: "+0545", daylight: "+0545")
        case "Pacific/Apia": return .init(standard: "+13", daylight: "+13")
        default: return .init(standard: "UTC", daylight: "UTC")
        }
    }
}
