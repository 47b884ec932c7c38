import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// chime and chimed read zone rules from the system's tz database (`TZDIR`), and chimed follows a change
/// of it while running, as it follows a change of the system zone.
@Suite(.serialized) struct ZoneDatabaseTests {
    /// A zone directory of its own, holding Europe/Berlin's and Asia/Tokyo's files, removed by `remove()`.
    struct ZoneDirectory {
        let path: String

        init() throws {
            path = NSTemporaryDirectory() + "zoneinfo-" + UUID().uuidString
            for name in ["Europe/Berlin", "Asia/Tokyo", "UTC"] { try install(from: name, as: name) }
        }

        /// Puts the system's file for `source` at `name`, written beside it and renamed into place, as
        /// dpkg installs a new tzdata.
        func install(from source: String, as name: String) throws {
            let target = path + "/" + name
            try FileManager.default.createDirectory(
                atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/" + source))
            try bytes.write(to: URL(fileURLWithPath: target + ".dpkg-new"))
            guard rename(target + ".dpkg-new", target) == 0 else { throw TestFailure("cannot replace \(target)") }
        }

        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    /// The hour and offset of `chime next`'s first line, e.g. `2027-01-04T12:00:00+09:00`.
    static func firstLine(_ output: String) -> Substring {
        output.split(separator: "\n").first?.split(separator: "\t").first ?? ""
    }

    @Test func chimeNextAnswersByTheZoneFilesOfTZDIR() async throws {
        let zones = try ZoneDirectory()
        defer { zones.remove() }
        try zones.install(from: "Asia/Tokyo", as: "Europe/Berlin")
        let arguments = [
            "next", "--rrule", "FREQ=DAILY;BYHOUR=12;BYMINUTE=0;BYSECOND=0", "--tz", "Europe/Berlin", "--after",
            "2027-01-04T00:00:00", "--count", "1",
        ]
        func next(_ environment: [String: String]) async throws -> Substring {
            let process = try ManagedProcess(Binaries.chime, arguments, environment: environment)
            let status = await process.waitForExit(timeout: .seconds(30))
            #expect(status == 0, "\(process.stderr)")
            return Self.firstLine(process.stdout)
        }
        // An empty TZDIR is no TZDIR: /usr/share/zoneinfo.
        #expect(try await next(["TZDIR": ""]) == "2027-01-04T12:00:00+01:00")
        #expect(try await next(["TZDIR": zones.path]) == "2027-01-04T12:00:00+09:00")
    }

    @Test func aRunningChimedReschedulesWhenTheZoneDatabaseChanges() async throws {
        let zones = try ZoneDirectory()
        defer { zones.remove() }
        try await Session.run(zone: "UTC", startChimed: false) { s in
            s.chimedEnvironment["TZDIR"] = zones.path
            s.chimed = try await s.startChimed()
            #expect(
                try await s.chime(["send", "--every", "every day at 12:00", "--tz", "Europe/Berlin", "Call"]).status
                    == 0)
            func fireDate() async throws -> Date {
                let item = try #require(try await s.chimeJSON(["pending"]).first)
                return try #require(GroupTests.date(item["at"] as? String))
            }
            #expect(GroupTests.wallClock(try await fireDate(), in: "Europe/Berlin").hour == 12)
            // A tzdata upgrade gives Berlin Tokyo's rules: the next delivery moves to noon on Tokyo's clock.
            try zones.install(from: "Asia/Tokyo", as: "Europe/Berlin")
            try await s.chimed!.waitForStderr(containing: "the time zone database in \(zones.path) changed")
            let moved = try await fireDate()
            #expect(GroupTests.wallClock(moved, in: "Asia/Tokyo").hour == 12)
            #expect(GroupTests.wallClock(moved, in: "Asia/Tokyo").minute == 0)
        }
    }

    /// A zone that a tzdata upgrade adds has a file in the database and no entry in the copy compiled into
    /// Foundation's ICU; chime answers in it as `date` does.
    @Test func chimeNextKnowsAZoneOnlyTheDatabaseHas() async throws {
        let zones = try ZoneDirectory()
        defer { zones.remove() }
        try zones.install(from: "Asia/Tokyo", as: "Mars/Olympus")
        let arguments = [
            "next", "--rrule", "FREQ=DAILY;BYHOUR=12;BYMINUTE=0;BYSECOND=0", "--tz", "Mars/Olympus", "--after",
            "2027-01-04T00:00:00", "--count", "1",
        ]
        let known = try ManagedProcess(Binaries.chime, arguments, environment: ["TZDIR": zones.path])
        #expect(await known.waitForExit(timeout: .seconds(30)) == 0, "\(known.stderr)")
        #expect(Self.firstLine(known.stdout) == "2027-01-04T12:00:00+09:00")
        // The system's database has no such zone: a clear refusal.
        let unknown = try ManagedProcess(Binaries.chime, arguments, environment: ["TZDIR": ""])
        #expect(await unknown.waitForExit(timeout: .seconds(30)) == 2)
        #expect(unknown.stderr.contains("unknown time zone 'Mars/Olympus'"), "\(unknown.stderr)")
    }

    @Test func aRunningChimedTakesAZoneTheDatabaseGains() async throws {
        let zones = try ZoneDirectory()
        defer { zones.remove() }
        try await Session.run(zone: "UTC", startChimed: false) { s in
            s.chimedEnvironment["TZDIR"] = zones.path
            s.chimed = try await s.startChimed()
            let send = ["send", "--every", "every day at 12:00", "--tz", "Mars/Olympus", "Call"]
            let refused = try await s.chime(send)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("Mars/Olympus"), "\(refused.stderr)")
            #expect(try await s.chimeJSON(["pending"]).isEmpty)
            // A tzdata upgrade adds the zone: chimed reads it without a restart.
            try zones.install(from: "Asia/Tokyo", as: "Mars/Olympus")
            try await s.chimed!.waitForStderr(containing: "the time zone database in \(zones.path) changed")
            let accepted = try await s.chime(send)
            #expect(accepted.status == 0, "\(accepted.stderr)")
            let item = try #require(try await s.chimeJSON(["pending"]).first)
            let at = try #require(GroupTests.date(item["at"] as? String))
            #expect(GroupTests.wallClock(at, in: "Asia/Tokyo").hour == 12)
            #expect(GroupTests.wallClock(at, in: "Asia/Tokyo").minute == 0)
        }
    }

    /// A container that mounts its host's `/etc/localtime` sees a copy of a zone's file, not a link: chimed
    /// takes the file's own rules for the system's zone, and reads them again when the file is replaced.
    @Test func aSystemZoneThatIsACopiedFileFollowsTheFile() async throws {
        try await Session.run(zone: "UTC") { s in
            func copy(_ zone: String) throws {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/" + zone))
                try bytes.write(to: URL(fileURLWithPath: s.localtime + ".new"))
                guard rename(s.localtime + ".new", s.localtime) == 0 else { throw TestFailure("cannot replace") }
            }
            #expect(try await s.chime(["send", "--every", "every day at 12:00", "Lunch"]).status == 0)
            func fireDate() async throws -> Date {
                let item = try #require(try await s.chimeJSON(["pending"]).first)
                return try #require(GroupTests.date(item["at"] as? String))
            }
            #expect(GroupTests.wallClock(try await fireDate(), in: "UTC").hour == 12)
            try copy("Asia/Tokyo")
            try await s.chimed!.waitForStderr(containing: "the time zone is now localtime")
            #expect(GroupTests.wallClock(try await fireDate(), in: "Asia/Tokyo").hour == 12)
            try copy("America/New_York")
            try await s.chimed!.waitForStderr(containing: "the system's time zone file \(s.localtime) changed")
            let moved = try await fireDate()
            #expect(GroupTests.wallClock(moved, in: "America/New_York").hour == 12)
            #expect(GroupTests.wallClock(moved, in: "America/New_York").minute == 0)
        }
    }
}
