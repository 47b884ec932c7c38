import ChimeCore
import Foundation
import Testing

@testable import ChimeConfig

/// An entry with an id, for the cases below: `[[entry]]` is line 1, `id` line 2.
private let entryStart = "[[entry]]\nid = \"a\"\n"
private let daily = "every = \"every day at 9:00\"\n"
private let entryKeys =
    "id, every, rrule, on-calendar, at, dtstart, tz, until, count, offset, escalate-every, escalate-times, wake, app-name, "
    + "summary, subtitle, body, markup, icon, sound, "
    + "urgency, expire-timeout, category, actions, template, user-info, pool, command, callback"
private let placeholders = "{date}, {time}, {weekday}, {day}, {month}, {year}, {n}"

/// Broken group files and the error each gives, written out in full.
private let brokenFiles: [(text: String, expected: String)] = [
    (
        "app-nam = \"x\"",
        "g.toml:1: unknown key app-nam in the group file; did you mean app-name? "
            + "Known keys: app-name, missed, late-window, enabled, entry, category, missed-when-off, "
            + "late-window-when-off, missed-when-suspended, late-window-when-suspended, missed-when-not-running, "
            + "late-window-when-not-running"
    ),
    (
        entryStart + daily + "summary = \"s\"\nbdoy = \"x\"",
        "g.toml:5: unknown key bdoy in entry \"a\"; did you mean body? Known keys: \(entryKeys)"
    ),
    (
        entryStart + daily + "summary = \"s\"\nmissed = \"skip\"",
        "g.toml:5: unknown key missed in entry \"a\"; missed belongs to the group: move it above the first [[entry]] "
            + "(keys below a [section] line belong to that section)"
    ),
    (
        entryStart + daily + "[entry.pool]\nitems = [\"x\"]\nsummary = \"s\"",
        "g.toml:6: unknown key summary in [entry.pool]; summary belongs to the entry: move it above [entry.pool] "
            + "(keys below a [section] line belong to that section)"
    ),
    (
        entryStart + daily + "at = \"2026-12-01T09:00:00\"\nsummary = \"s\"",
        "g.toml:4: entry \"a\" has both every and at; keep one of every, rrule, on-calendar and at"
    ),
    (
        entryStart + "summary = \"s\"",
        "g.toml:1: entry \"a\" has no time; add one of every = \"every day at 9:00\", "
            + "rrule = \"FREQ=WEEKLY;BYDAY=MO\", on-calendar = \"Mon *-*-* 09:00\" or at = \"2026-12-01T09:00:00\""
    ),
    (
        entryStart + "every = \"every friyay at 9:00\"\nsummary = \"s\"",
        "g.toml:3: every: invalid phrase at position 7 (\"friyay\"): expected a unit such as day, week, month, "
            + "year or hours, a weekday such as friday, a day of the month such as the 15th or the last friday, or a "
            + "date such as january 27; did you mean 'friday'?"
    ),
    (
        entryStart + "on-calendar = \"Mon *-*-* 25:00\"\nsummary = \"s\"",
        "g.toml:3: on-calendar: invalid OnCalendar at position 11 (\"25\"): expected an hour 0–23; a repetition must "
            + "fit in the field at least once and a range must run upwards"
    ),
    (
        entryStart + daily + "tz = \"Mars/Olympus\"\nsummary = \"s\"",
        "g.toml:4: unknown time zone \"Mars/Olympus\"; use an IANA name such as Europe/Berlin or America/New_York"
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.command]\nrun = [\"fortune\"]\ntimeout = \"5 seconds\"",
        "g.toml:7: timeout: cannot read \"5 seconds\" (at character 2): expected a duration such as 90s, 10m, "
            + "1h30m or 2d (units s, m, h, d, w); e.g. timeout = \"5s\""
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.pool]\nitems = [{ body = \"retired\", enabled = false }]",
        "g.toml:6: the pool has no enabled item; add an item, or set enabled = true on one"
    ),
    (
        entryStart + daily + "summary = \"s\"\n\n[[entry]]\nid = \"a\"\nat = \"2026-12-01T09:00:00\"\nsummary = \"t\"",
        "g.toml:7: entry id \"a\" is already used on line 2; give every entry its own id"
    ),
    (
        entryStart + daily + "summary = \"It is {wekday}\"\ntemplate = true",
        "g.toml:4: unknown placeholder {wekday} in summary; the placeholders are \(placeholders)"
    ),
    (
        entryStart + daily + "summary = \"s\"\ntemplate = true\n[entry.pool]\nitems = [\n    \"fine on {date}\",\n"
            + "    \"not on {tomorrow}\",\n]",
        "g.toml:9: unknown placeholder {tomorrow} in pool item 2; the placeholders are \(placeholders)"
    ),
    (
        entryStart + daily + "summary = \"s\"\nurgency = \"high\"",
        "g.toml:5: urgency = \"high\" is not an urgency; use \"low\", \"normal\" or \"critical\""
    ),
    (
        entryStart + daily + "summary = \"s\"\nescalate-every = \"30s\"",
        "g.toml:5: escalation interval must be from 1 minute to 1 day; e.g. escalate-every = \"5m\", escalate-times = 3"
    ),
    (
        entryStart + daily + "summary = \"s\"\nescalate-every = \"5m\"\nescalate-times = 11",
        "g.toml:6: escalation times must be from 1 to 10; e.g. escalate-every = \"5m\", escalate-times = 3"
    ),
    (
        entryStart + daily + "summary = \"s\"\nescalate-times = 2",
        "g.toml:5: escalate-times goes with escalate-every; add escalate-every = \"5m\""
    ),
    (
        entryStart + daily + "summary = \"s\"\noffset = \"15 minutes\"",
        "g.toml:5: offset: cannot read \"15 minutes\" (at character 3): expected a signed duration such as -15m, -1d "
            + "or +2h (units w, d, h, m, s)"
    ),
    (
        entryStart + "at = \"2030-01-01T09:00:00\"\nsummary = \"s\"\noffset = \"-15m\"",
        "g.toml:5: offset moves a rule's occurrences; a one-off (at) has none: move at instead"
    ),
    (
        entryStart + daily + "summary = \"s\"\noffset = \"-400d\"",
        "g.toml:5: offset: cannot read \"-400d\" (at character 1): expected an offset of at most a year (366d) either way"
    ),
    (
        entryStart + daily + "summary = \"s\"\ncount = 0",
        "g.toml:5: count must be at least 1; remove it for no limit"
    ),
    (
        "[[entry]]\n" + daily + "summary = \"s\"",
        "g.toml:1: entry number 1 has no id; add id = \"morning\" (letters, digits, '-', '_', '.'; unique)"
    ),
    (
        "[[entry]]\nid = \"good morning\"\n" + daily + "summary = \"s\"",
        "g.toml:2: the entry id \"good morning\" contains \" \"; use letters, digits, '-', '_' and '.' only"
    ),
    (
        entryStart + daily,
        "g.toml:1: entry \"a\" has no summary; add summary = \"…\""
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.pool]\nitems = [\"x\"]\n[entry.command]\nrun = [\"date\"]",
        "g.toml:7: entry \"a\" has both [entry.pool] and [entry.command]; keep one source of content"
    ),
    (
        entryStart + daily + "summary = \"s\"\ntemplate = true\n[entry.command]\nrun = [\"date\"]",
        "g.toml:5: template = true applies to fixed text and pools, not to [entry.command]; remove it"
    ),
    (
        entryStart + daily + "dtstart = \"2026-11-23T09:00:00\"\nsummary = \"s\"",
        "g.toml:4: dtstart applies only with rrule; remove it, or write the rule as rrule"
    ),
    (
        entryStart + "rrule = \"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=31\"\nsummary = \"s\"",
        "g.toml:3: rrule: the rule never fires (no date matches it); check its days and months"
    ),
    (
        entryStart + "every = \"tomorrow at 9:00\"\nsummary = \"s\"",
        "g.toml:3: every = \"tomorrow at 9:00\" means a different time each time the file is read; for a one-off "
            + "write at = \"2026-12-01T09:00:00\", for a repeat start with \"every\""
    ),
    (
        entryStart + daily + "summary = \"s\"\nactions = [\n  \"a=One\",\n  \"a=Two\",\n]",
        "g.toml:7: the action key \"a\" appears twice; give every action its own key"
    ),
    (
        entryStart + daily + "summary = \"s\"\nactions = [\"=Nameless\"]",
        "g.toml:5: the action \"=Nameless\" has an empty key; write KEY=LABEL"
    ),
    (
        entryStart + daily + "summary = \"s\"\nexpire-timeout = -2",
        "g.toml:5: expire-timeout must be milliseconds, or -1 for the server's default, or 0 for never"
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.pool]\nitems = [{ body = \"x\", sumary = \"y\" }]",
        "g.toml:6: unknown key sumary in pool item 1; did you mean summary? Known keys: body, summary, enabled"
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.pool]\nitems = [\"x\", 1]",
        "g.toml:6: pool item 2 must be text or { body = \"…\", summary = \"…\" }, not an integer"
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.pool]\nitems = [{ summary = \"y\" }]",
        "g.toml:6: pool item 1 has no body; write it as { body = \"…\" }"
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.pool]\nitems = [{ body = \"x\", enabled = \"no\" }]",
        "g.toml:6: pool item 1: enabled must be true or false (without quotes), not text"
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.pool]\norders = \"random\"\nitems = [\"x\"]",
        "g.toml:6: unknown key orders in [entry.pool]; did you mean order? Known keys: order, items"
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.pool]\norder = \"sorted\"\nitems = [\"x\"]",
        "g.toml:6: order = \"sorted\" is not an order; use \"random\", \"in-order\" or \"shuffled\""
    ),
    (
        entryStart + daily + "[entry.pool]\nitems = [\n  { body = \"x\", summary = \"T\" },\n  \"y\",\n]",
        "g.toml:7: pool item 2 has no summary and entry \"a\" has none; add summary = \"…\" to the entry (for every "
            + "item without one) or write this item as { body = \"…\", summary = \"…\" }"
    ),
    (
        "[entry]\nid = \"a\"",
        "g.toml:1: write each entry as a section that starts with [[entry]] (two brackets)"
    ),
    (
        entryStart + "at = \"2026-13-01T09:00:00\"\nsummary = \"s\"",
        "g.toml:3: at = \"2026-13-01T09:00:00\" is not a date; at must be a local date and time such as "
            + "\"2026-12-01T09:00:00\" (the zone comes from tz)"
    ),
    (
        entryStart + "at = 2026-12-01T09:00:00+01:00\nsummary = \"s\"",
        "g.toml:3: at must be a local date and time such as \"2026-12-01T09:00:00\", without a UTC offset; "
            + "set tz for the zone"
    ),
    (
        entryStart + daily + "summary = \"s\"\nuntil = 2027",
        "g.toml:5: until must be a local date and time such as \"2026-12-01T09:00:00\", not an integer"
    ),
    (
        entryStart + daily + "summary = 5",
        "g.toml:4: summary must be text in quotes, not an integer; e.g. summary = \"Stand-up\""
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.command]\nrun = []",
        "g.toml:6: run is empty; give the program and its arguments, e.g. run = [\"fortune\", \"-s\"]"
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.command]\nrun = [\"fortune\"]\ntimeout = \"61s\"",
        "g.toml:7: the command timeout must be at most 60s; the program is killed after it"
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.command]\nrun = [\"fortune\"]\noutput = \"stdout\"",
        "g.toml:7: output = \"stdout\" is not an output; use \"body\" or \"summary-and-body\""
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.callback]\ntimeout = \"1s\"",
        "g.toml:5: [entry.callback] needs bus-name, the app's D-Bus name: bus-name = \"org.example.App\""
    ),
    (
        entryStart + daily + "summary = \"s\"\n[entry.callback]\nbus-name = \"org.example.App\"\ntimeout = \"20s\"",
        "g.toml:7: the call back timeout must be at most 10s; after it the entry's own text is shown"
    ),
    (
        entryStart + daily + "summary = \"s\"\nuser-info = { retries = 3 }",
        "g.toml:5: user-info retries must be text in quotes, not an integer"
    ),
    (
        "late-window = \"2h\"",
        "g.toml:1: late-window applies only with missed = \"deliver-late\"; add that line or remove this one"
    ),
    (
        "late-window-when-off = \"2h\"",
        "g.toml:1: late-window-when-off applies only with missed-when-off = \"deliver-late\"; add that line or "
            + "remove this one"
    ),
    (
        "missed-when-suspended = \"later\"",
        "g.toml:1: missed-when-suspended = \"later\" is not a policy; use \"deliver-late\", \"coalesce\", \"skip\""
    ),
    (
        "missed-when-asleep = \"skip\"",
        "g.toml:1: unknown key missed-when-asleep in the group file; Known keys: "
            + "app-name, missed, late-window, enabled, entry, category, missed-when-off, late-window-when-off, "
            + "missed-when-suspended, late-window-when-suspended, missed-when-not-running, late-window-when-not-running"
    ),
    (
        "missed = \"never\"",
        "g.toml:1: missed = \"never\" is not a policy; use \"deliver-late\", \"coalesce\", \"skip\""
    ),
    (
        "enabled = \"yes\"",
        "g.toml:1: enabled must be true or false (without quotes), not text"
    ),
    (
        entryStart + daily + "summary = \"s\"\nbody = \"\(String(repeating: "x", count: 16_001))\"",
        "g.toml:1: entry \"a\": the body is longer than 16000 bytes; shorten it"
    ),
]

@Suite struct GroupFileTests {
    @Test func everyKeyOfAFixedEntryIsRead() throws {
        let group = try Fixture.group(
            """
            app-name = "Quotes"
            missed = "coalesce"
            enabled = false

            [[entry]]
            id = "morning"
            every = "every day at 9:00"
            tz = "America/New_York"
            until = "2027-06-30T00:00:00"
            count = 50
            escalate-every = "15m"
            escalate-times = 2
            summary = "Quote of the day"
            subtitle = "For {weekday}"
            body = "Read on {date}"
            icon = "face-smile"
            sound = "message-new-instant"
            urgency = "low"
            expire-timeout = 10000
            category = "quote"
            actions = ["stop-repeat=Stop Repeat", "snooze:10m=Snooze 10 min", "Later"]
            template = true
            user-info = { key = "value", other = "2" }
            """)
        #expect(group.id == "g")
        #expect(group.owner == "")
        #expect(group.settings == GroupSettings(missedPolicy: .coalesce, enabled: false))
        let content = NotificationContent(
            appName: "Quotes", summary: "Quote of the day", subtitle: "For {weekday}", body: "Read on {date}",
            icon: "face-smile", sound: "message-new-instant", urgency: .low, expireTimeout: 10000,
            actions: [
                NotificationAction(key: "stop-repeat", label: "Stop Repeat"),
                NotificationAction(key: "snooze:10m", label: "Snooze 10 min"),
                NotificationAction(key: "2", label: "Later"),
            ],
            userInfo: ["key": "value", "other": "2"])
        #expect(
            group.entries == [
                TimelineEntry(
                    id: "morning", trigger: .rule(.phrase("every day at 9:00"), timeZone: "America/New_York"),
                    content: .template(content), category: "quote",
                    // Midnight in New York (EDT, UTC-4).
                    endDate: Fixture.instant("2027-06-30T04:00:00Z"), maximumOccurrences: 50,
                    escalation: Escalation(every: 900, times: 2))
            ])
    }

    @Test func aMinimalFileHasTheDefaults() throws {
        let group = try Fixture.group(
            """
            [[entry]]
            id = "tea"
            at = "2026-12-01T16:00:00"
            summary = "Tea"
            """)
        #expect(group.settings == GroupSettings(missedPolicy: nil, enabled: true))
        #expect(
            group.entries == [
                TimelineEntry(
                    id: "tea", trigger: .at(Fixture.instant("2026-12-01T15:00:00Z")),
                    content: .fixed(NotificationContent(summary: "Tea")))
            ])
        #expect(try Fixture.group("# nothing yet\n").entries == [])
    }

    @Test(arguments: [
        ("-15m", OccurrenceOffset(seconds: -900)), ("-1d", OccurrenceOffset(days: -1)),
        ("+1w2h", OccurrenceOffset(days: 7, seconds: 7200)), ("0s", nil),
    ])
    func anOffsetMovesEachOccurrenceOfTheRule(text: String, offset: OccurrenceOffset?) throws {
        let group = try Fixture.group(
            """
            [[entry]]
            id = "review"
            every = "every month on the first friday at 20:15"
            offset = "\(text)"
            summary = "Review"
            """)
        #expect(group.entries.first?.offset == offset)
    }

    @Test(arguments: [
        ("missed = \"deliver-late\"", MissedPolicy.deliverLate(window: 3600)),
        ("missed = \"deliver-late\"\nlate-window = \"2h\"", .deliverLate(window: 7200)),
        ("missed = \"coalesce\"", .coalesce),
        ("missed = \"skip\"", .skip),
    ])
    func theGroupsMissedPolicyIsRead(keys: String, policy: MissedPolicy) throws {
        #expect(try Fixture.group(keys).settings.missedPolicy == policy)
    }

    @Test func eachCauseOfAMissedOccurrenceMayHaveItsOwnPolicy() throws {
        let settings = try Fixture.group(
            """
            missed = "skip"
            missed-when-off = "coalesce"
            missed-when-suspended = "deliver-late"
            late-window-when-suspended = "4h"
            """
        ).settings
        #expect(settings.missedPolicy == .skip)
        #expect(settings.missedPolicyByCause == [.machineOff: .coalesce, .suspended: .deliverLate(window: 14_400)])
        #expect(settings.missedPolicy(for: .notRunning) == .skip)
        #expect(settings.missedPolicy(for: nil) == .skip)
        #expect(try Fixture.group("missed = \"skip\"").settings.missedPolicyByCause == nil)
    }

    @Test(arguments: [
        (
            "rrule = \"FREQ=WEEKLY;BYDAY=MO\"\ndtstart = \"2026-11-23T09:00:00\"",
            EntryTrigger.rule(
                .rrule("FREQ=WEEKLY;BYDAY=MO", dtstart: LocalDateTime(year: 2026, month: 11, day: 23, hour: 9)),
                timeZone: nil)
        ),
        (
            "rrule = \"FREQ=WEEKLY;BYDAY=MO\"\ndtstart = 2026-11-23T09:00:00",
            .rule(
                .rrule("FREQ=WEEKLY;BYDAY=MO", dtstart: LocalDateTime(year: 2026, month: 11, day: 23, hour: 9)),
                timeZone: nil)
        ),
        ("rrule = \"FREQ=DAILY;BYHOUR=9\"", .rule(.rrule("FREQ=DAILY;BYHOUR=9", dtstart: nil), timeZone: nil)),
        ("on-calendar = \"Fri *-*-01..07 20:15\"", .rule(.onCalendar("Fri *-*-01..07 20:15"), timeZone: nil)),
        (
            "every = \"every weekday at 9:15\"\ntz = \"Asia/Tokyo\"",
            .rule(.phrase("every weekday at 9:15"), timeZone: "Asia/Tokyo")
        ),
        ("at = \"2026-12-01T09:00:00\"", .at(Fixture.instant("2026-12-01T08:00:00Z"))),
        ("at = 2026-12-01T09:00:00", .at(Fixture.instant("2026-12-01T08:00:00Z"))),
        ("at = \"2026-12-01\"", .at(Fixture.instant("2026-11-30T23:00:00Z"))),
        ("at = \"2026-12-01T09:00:00\"\ntz = \"Asia/Tokyo\"", .at(Fixture.instant("2026-12-01T00:00:00Z"))),
        // 02:30 does not exist in Berlin on 2027-03-28: the end of the gap, 03:00 CEST.
        ("at = \"2027-03-28T02:30:00\"", .at(Fixture.instant("2027-03-28T01:00:00Z"))),
    ])
    func everyFormOfTriggerIsRead(keys: String, trigger: EntryTrigger) throws {
        let entry = try Fixture.entry("[[entry]]\nid = \"a\"\nsummary = \"s\"\n" + keys)
        #expect(entry.trigger == trigger)
    }

    @Test func aPoolTakesItsItemsAndTheEntrysFieldsAsItsBase() throws {
        let entry = try Fixture.entry(
            """
            app-name = "Quotes"
            [[entry]]
            id = "q"
            every = "every day at 9:00"
            summary = "Quote"
            icon = "face-smile"
            template = true
            [entry.pool]
            order = "in-order"
            items = [
                "one on {weekday}",
                { body = "two", summary = "Other title" },
                { body = "retired", enabled = false },
            ]
            """)
        let pool = ContentPool(
            base: NotificationContent(appName: "Quotes", summary: "Quote", icon: "face-smile"),
            items: [
                ContentPool.Item(body: "one on {weekday}"),
                ContentPool.Item(summary: "Other title", body: "two"),
                ContentPool.Item(body: "retired", enabled: false),
            ], order: .inOrder, fillsPlaceholders: true)
        #expect(entry.content == .pool(pool))
    }

    @Test func aPoolWithoutAnEntrySummaryShowsTheFirstItemsInListings() throws {
        let entry = try Fixture.entry(
            """
            [[entry]]
            id = "q"
            every = "every day at 9:00"
            [entry.pool]
            items = [{ body = "off", summary = "Off", enabled = false }, { body = "a", summary = "A" }]
            """)
        #expect(
            entry.content
                == .pool(
                    ContentPool(
                        base: NotificationContent(summary: "A"),
                        items: [
                            ContentPool.Item(summary: "Off", body: "off", enabled: false),
                            ContentPool.Item(summary: "A", body: "a"),
                        ], order: .shuffled, fillsPlaceholders: false)))
    }

    @Test func aCommandKeepsTheEntrysFieldsAsItsFallback() throws {
        let entry = try Fixture.entry(
            """
            [[entry]]
            id = "f"
            every = "every day at 9:00"
            summary = "Fortune"
            body = "No fortune today."
            [entry.command]
            run = ["fortune", "-s"]
            timeout = "10s"
            output = "summary-and-body"
            """)
        #expect(
            entry.content
                == .command(
                    CommandSource(
                        arguments: ["fortune", "-s"], timeout: 10, output: .summaryAndBody,
                        base: NotificationContent(summary: "Fortune", body: "No fortune today."))))
    }

    @Test func aCommandAndACallBackHaveDefaultTimeouts() throws {
        let command = try Fixture.entry(
            "[[entry]]\nid = \"f\"\nevery = \"every day at 9:00\"\nsummary = \"s\"\n[entry.command]\nrun = [\"date\"]")
        #expect(
            command.content
                == .command(
                    CommandSource(
                        arguments: ["date"], timeout: 5, output: .body, base: NotificationContent(summary: "s"))
                ))
        let callback = try Fixture.entry(
            "[[entry]]\nid = \"c\"\nevery = \"every day at 9:00\"\nsummary = \"s\"\n[entry.callback]\n"
                + "bus-name = \"org.example.App\"")
        #expect(
            callback.content
                == .callback(
                    CallbackSource(busName: "org.example.App", timeout: 1, fallback: NotificationContent(summary: "s")))
        )
    }

    @Test func aCallBackIsReadWithItsTimeout() throws {
        let entry = try Fixture.entry(
            """
            [[entry]]
            id = "c"
            every = "every day at 9:00"
            summary = "Inbox"
            body = "You have mail."
            [entry.callback]
            bus-name = "org.example.Mail"
            timeout = "2s"
            """)
        #expect(
            entry.content
                == .callback(
                    CallbackSource(
                        busName: "org.example.Mail", timeout: 2,
                        fallback: NotificationContent(summary: "Inbox", body: "You have mail."))))
    }

    @Test func anEntrysAppNameWinsOverTheGroups() throws {
        let entry = try Fixture.entry(
            "app-name = \"Group\"\n[[entry]]\nid = \"a\"\nat = \"2026-12-01\"\nsummary = \"s\"\napp-name = \"Own\"")
        #expect(entry.content.base.appName == "Own")
    }

    @Test func anEntryMayAskToWakeTheMachine() throws {
        let base = "[[entry]]\nid = \"a\"\nevery = \"every day at 6:30\"\nsummary = \"Up\"\n"
        #expect(try Fixture.entry(base + "wake = true").wake)
        #expect(try !Fixture.entry(base + "wake = false").wake && !Fixture.entry(base).wake)
        #expect {
            try Fixture.group(base + "wake = \"yes\"")
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.line == 5 && error.reason.contains("wake must be true or false (without quotes)")
        }
    }

    @Test func withoutTemplateBracesAreNotChecked() throws {
        let entry = try Fixture.entry(
            "[[entry]]\nid = \"a\"\nat = \"2026-12-01\"\nsummary = \"{anything}\"")
        #expect(entry.content == .fixed(NotificationContent(summary: "{anything}")))
    }

    @Test(arguments: brokenFiles)
    func aBrokenFileNamesTheFileTheLineAndWhatToWrite(text: String, expected: String) {
        #expect {
            try Fixture.group(text)
        } throws: { error in
            (error as? ConfigError)?.description == expected
        }
    }

    @Test func aSyntaxErrorHasTomlKitsLine() {
        #expect {
            try Fixture.group("[[entry]]\nid = \"a\"\nsummary = \"unterminated\n")
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.file == "g.toml" && error.line == 3 && error.reason.hasPrefix("not valid TOML: ")
        }
    }

    @Test func aFileNameThatIsNoGroupIDIsReportedForTheWholeFile() {
        #expect(
            throws: ConfigError(
                file: "my quotes.toml", line: nil,
                reason: "the file name gives the group id, and the group id \"my quotes\" contains \" \"; use letters, "
                    + "digits, '-', '_' and '.' only; rename the file, e.g. daily-quote.toml")
        ) {
            try GroupFile.parse(
                "", file: "my quotes.toml", groupID: "my quotes", now: Fixture.now, timeZone: Fixture.berlin)
        }
    }
}
