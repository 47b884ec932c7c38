import ChimeKit
import ChimeProtocol
import DBusKit
import Foundation
import TestSupport
import Testing

/// Listings cost their caller and stay small (issue "Isolation", docs/security.md): `ListPending` and
/// `History` answer in pages of at most `ChimeBus.maximumReplyBytes`, read off the daemon's queue, so that
/// no listing can make a reply too big for the bus (which disconnected chimed) or hold up deliveries; the
/// CLI and ChimeKit follow the pages.
@Suite(.serialized) struct ListingIsolationTests {
    static func record(_ pairs: KeyValuePairs<String, DBusValue>) -> DBusValue { BusAPITests.record(pairs) }
    static func record(_ values: [String: DBusValue]) -> DBusValue {
        .dictionary(
            key: .string, value: .variant,
            values.sorted { $0.key < $1.key }.map { DBusDictEntry(.string($0.key), .variant($0.value)) })
    }
    static let farFuture = HostileAppTests.farFuture

    /// An RRULE set of about 16 KB: a daily rule and many EXDATE lines, as a calendar series with its
    /// exceptions is written.
    static let bigRule: String = {
        var text = "RRULE:FREQ=DAILY;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
        var day = 0
        while text.utf8.count < 15_900 {
            let date = Date(timeIntervalSince1970: 2_208_988_800 + Double(day) * 86_400)  // from 2040-01-01
            let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: date)
            text += String(format: "\nEXDATE:%04d%02d%02dT090000", parts.year!, parts.month!, parts.day!)
            day += 1
        }
        return text
    }()

    /// An entry of a group as Reschedule takes it: its trigger's keys beside its id and content.
    static func entry(_ id: String, summary: String, trigger: [String: DBusValue]) -> DBusValue {
        record(trigger.merging(["id": .string(id), "content": record(["summary": .string(summary)])]) { a, _ in a })
    }

    static func reschedule(_ app: DBusConnection, group: String, entries: [DBusValue]) async throws {
        _ = try await HostileAppTests.call(
            app, "Reschedule",
            [
                .string(group), HostileAppTests.empty, .array(element: BusAPITests.recordType, entries),
                HostileAppTests.empty,
            ],
            timeout: .seconds(120))
    }

    /// The records of a reply, and the cursor of its `next-page` record, which must be its last.
    static func page(_ reply: [DBusValue]) throws -> (records: [WireFields], next: String?) {
        var fields = try WireRecord.fields(of: reply.first, what: "reply")
        guard let last = fields.last, last.has("next-page") else { return (fields, nil) }
        fields.removeLast()
        #expect(fields.allSatisfy { !$0.has("next-page") }, "next-page is not the last record")
        return (fields, try last.string("next-page"))
    }

    /// The size of a reply on the wire.
    static func bytes(_ reply: [DBusValue]) throws -> Int {
        try DBusMessage(kind: .methodReturn, body: reply).serialized().count
    }

    @Test func aPendingListingLargerThanOneReplyComesInPagesAndChimedLives() async throws {
        try await Session.run(settings: HostileAppTests.generous) { s in
            let pid = try await HostileAppTests.chimedPID(s)
            let app = try await s.appConnection("io.example.Calendar")
            // 300 items of 16 KB each: about 5 MB listed, more than one reply may hold.
            let entries = (0..<300).map { index in
                Self.entry(
                    "series-\(index)", summary: "s",
                    trigger: ["rrule": .string(Self.bigRule), "dtstart": .string("2039-06-01T09:00:00")])
            }
            try await Self.reschedule(app, group: "series", entries: entries)
            var ids: [UInt64] = []
            var pages = 0
            var options: [String: DBusValue] = [:]
            while true {
                let reply = try await HostileAppTests.call(
                    app, "ListPending", [Self.record(options)])
                #expect(try Self.bytes(reply) <= ChimeBus.maximumReplyBytes)
                let (records, next) = try Self.page(reply)
                ids += try records.map { try #require(try $0.uint64("id")) }
                pages += 1
                guard let next else { break }
                options["after"] = .string(next)
                #expect(pages < 10, "the pages do not end")
                if pages >= 10 { break }
            }
            #expect(pages >= 2, "one reply held about 5 MB")
            #expect(ids.count == 300)
            #expect(Set(ids).count == 300, "an item was listed twice")
            // The user's chime follows the pages too.
            let listed = try await s.chimeJSON(["pending"])
            #expect(listed.count == 300)
            try await HostileAppTests.expectSameChimedServing(s, pid: pid)
        }
    }

    @Test func aHistoryLargerThanOneReplyComesInPagesAndChimedLives() async throws {
        try await Session.run(settings: HostileAppTests.generous) { s in
            let pid = try await HostileAppTests.chimedPID(s)
            let app = try await s.appConnection("io.example.Diary")
            // 5,000 entries with 1,000-byte summaries: 5,000 history records of about 1 KB.
            let summary = String(repeating: "h", count: 1000)
            let entries = (0..<5000).map { index in
                Self.entry(
                    "note-\(index)", summary: summary, trigger: ["at": .int64(Self.farFuture + Int64(index))])
            }
            try await Self.reschedule(app, group: "notes", entries: entries)
            var seqs: [UInt64] = []
            var pages = 0
            var options: [String: DBusValue] = ["limit": .uint32(100_000)]
            while true {
                let reply = try await HostileAppTests.call(
                    app, "History", [Self.record(options)])
                #expect(try Self.bytes(reply) <= ChimeBus.maximumReplyBytes)
                let (records, next) = try Self.page(reply)
                seqs += try records.map { try #require(try $0.uint64("seq")) }
                pages += 1
                guard let next, pages < 20 else { break }
                options["after"] = .string(next)
            }
            #expect(pages >= 2, "one reply held about 5 MB")
            #expect(seqs.count >= 5000)
            #expect(Set(seqs).count == seqs.count, "an entry was listed twice")
            #expect(seqs == seqs.sorted(by: >), "newest first, across pages")
            // The user's chime follows the pages, and stops at its limit.
            let all = try await s.chimeJSON(["history", "--limit", "100000"])
            #expect(all.count >= 5000)
            let some = try await s.chimeJSON(["history", "--limit", "4500"])
            #expect(some.count == 4500)
            try await HostileAppTests.expectSameChimedServing(s, pid: pid)
        }
    }

    /// A listing costs its app one call more for every 20 rows it read: with 100 items, a listing is six
    /// calls of the app's budget, and the listings a second an app may ask for shrink with what each reads.
    @Test func aListingIsPaidForByTheRowsItRead() async throws {
        let settings = "[limits]\ncalls-per-second = 0.01\ncall-burst = 31\n"
        try await Session.run(settings: settings) { s in
            let app = try await s.appConnection("io.example.Reader")
            let entries = (0..<100).map { index in
                Self.entry("e\(index)", summary: "s", trigger: ["at": .int64(Self.farFuture + Int64(index))])
            }
            try await Self.reschedule(app, group: "many", entries: entries)
            // 31 calls: one Reschedule, then listings of six each (the call and 100 rows), five of them.
            for _ in 0..<5 { _ = try await HostileAppTests.call(app, "ListPending", [HostileAppTests.empty]) }
            let error = await HostileAppTests.error("a sixth listing of 100 rows") {
                try await HostileAppTests.call(app, "ListPending", [HostileAppTests.empty])
            }
            HostileAppTests.expect(error, HostileAppTests.limitsExceeded, mentioning: "times a second", "sixth listing")
            // Another app is not charged for it.
            let other = try await s.appConnection("io.example.Other")
            _ = try await HostileAppTests.call(other, "ListPending", [HostileAppTests.empty])
        }
    }

    @Test func aCursorThatIsNotOneIsRefused() async throws {
        try await Session.run { s in
            let app = try await s.appConnection("io.example.Cursor")
            for (member, options) in [
                ("ListPending", Self.record(["after": .string("yesterday")])),
                ("ListPending", Self.record(["after": .string("1.2.3")])),
                ("History", Self.record(["after": .string("-4")])),
            ] {
                let error = await HostileAppTests.error("\(member) after a bad cursor") {
                    try await HostileAppTests.call(app, member, [options])
                }
                HostileAppTests.expect(error, HostileAppTests.invalidArgument, mentioning: "after", member)
            }
        }
    }
}
