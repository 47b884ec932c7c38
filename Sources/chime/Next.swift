import ArgumentParser
import ChimeConfig
import ChimeKit
import Foundation

struct Next: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Preview when a rule fires, without a daemon.",
        discussion: """
            Give exactly one rule: --rrule (RFC 5545), --on-calendar (systemd.time(7)) or --every (a phrase \
            such as "every month on the first friday at 20:15"; see docs/rule-phrases.md). Prints one \
            occurrence per line as local ISO 8601 time with its offset, e.g. 2026-12-04T20:15:00+01:00 \
            (one that daylight saving moved, or met twice, has a second, tab-separated column saying so), \
            and on standard error what the rule was understood as, in words and as an equivalent RRULE, and \
            the periods it skips (--json: an object with "occurrences", "understood", "rrule", "skips" and \
            "daylightSaving"). A rule that can never fire \
            is reported as such (exit status 3), and so is one whose next occurrence cannot be found within \
            chimed's search budget (a rule that fires too rarely for its frequency, which chimed refuses); \
            bad input names the offending token and its position, with the word it is probably a slip for \
            (exit status 2).
            """)

    @Option(help: ArgumentHelp("An RFC 5545 recurrence rule, e.g. FREQ=MONTHLY;BYDAY=1FR.", valueName: "RULE"))
    var rrule: String?

    @Option(help: ArgumentHelp("The rule's start, local time (default: --after).", valueName: "LOCAL_ISO"))
    var dtstart: String?

    @Option(
        name: .customLong("on-calendar"),
        help: ArgumentHelp("A systemd calendar event, e.g. 'Mon..Fri *-*-* 09:00'.", valueName: "EXPR"))
    var onCalendar: String?

    @Option(help: ArgumentHelp("A rule phrase, e.g. 'every day at 9:00'.", valueName: "PHRASE"))
    var every: String?

    @Option(
        help: ArgumentHelp(
            "List occurrences after this local time (exclusive; default: now); a phrase is read as if it were then.",
            valueName: "LOCAL_ISO"))
    var after: String?

    @Option(help: ArgumentHelp("The time zone (default: the system's).", valueName: "ZONE"))
    var tz: String?

    @Option(help: "How many occurrences to print.")
    var count: Int = 10

    @Flag(help: "Print a JSON object: the occurrences, what the rule was understood as, and its RRULE.")
    var json = false

    func run() throws {
        let zone: Zone
        if let tz {
            guard let named = Zone(identifier: tz) else {
                throw fail("--tz: unknown time zone '\(tz)'; use an IANA name such as Europe/Berlin", .badInput)
            }
            zone = named
        } else {
            zone = .current
        }
        guard count > 0, count <= 100_000 else { throw fail("--count must be between 1 and 100000", .badInput) }
        let now = Date()
        let start = try localTime(after, option: "--after", zone: zone) ?? now
        let rule: WrittenRule
        switch (rrule, onCalendar, every) {
        case (let text?, nil, nil):
            let dtstartValue: LocalDateTime?
            if let dtstart {
                guard let local = LocalDateTime(iso: dtstart) else {
                    throw fail(
                        "--dtstart: cannot read '\(dtstart)'; expected local time such as 2026-12-01T09:00:00",
                        .badInput)
                }
                dtstartValue = local
            } else {
                dtstartValue = nil
            }
            rule = .rrule(text, dtstart: dtstartValue)
        case (nil, let text?, nil): rule = .onCalendar(text)
        case (nil, nil, let text?): rule = .phrase(text)
        default:
            throw fail("give exactly one of --rrule, --on-calendar or --every", .badInput)
        }
        if dtstart != nil, rrule == nil { throw fail("--dtstart goes with --rrule only", .badInput) }
        let phrases = try phraseDefaults(for: rule)
        let recurrence: Recurrence
        do {
            // A phrase is anchored at --after, as if read then: "every day" starts on that day, "every
            // week" in its week and "every month" in its month, so each lists its first day after it.
            recurrence = try RulePreview.recurrence(
                rule, after: start, now: after == nil ? now : start, timeZone: zone, phraseDefaults: phrases)
        } catch {
            throw fail(error.description, .badInput)
        }
        let explanation = recurrence.explanation(after: start, systemTimeZone: zone)
        switch RulePreview.next(recurrence, after: start, timeZone: zone, count: count) {
        case .neverFires:
            if !json { FileHandle.standardError.write(Data(explanation.lines().utf8)) }
            throw fail("this rule never fires: no date matches it; check its dates and months", .notFound)
        case .searchExhausted(let dates):
            if !json { FileHandle.standardError.write(Data(explanation.lines().utf8)) }
            for date in dates { print(WallClock.iso8601(date, in: zone)) }
            let after = dates.isEmpty ? "its next occurrence" : "the occurrence after these"
            throw fail(
                "\(after) cannot be found within chimed's search budget (\(SearchBudget.stepsPerSearch) steps): "
                    + "the rule fires too rarely for its frequency, and chimed would refuse it; write it with a "
                    + "coarser FREQ (FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29 rather than FREQ=SECONDLY;…)", .notFound)
        case .occurrences(let dates):
            let lines = dates.map { WallClock.iso8601($0, in: zone) }
            let notes = dates.map { recurrence.daylightSavingNote(for: $0, systemTimeZone: zone) }
            let marked = zip(lines, notes).compactMap { line, note in note.map { (line, $0) } }
            if json {
                var object: [String: Any] = [
                    "occurrences": lines, "understood": explanation.words,
                    "rrule": explanation.rruleText ?? NSNull(),
                ]
                if !marked.isEmpty {
                    object["daylightSaving"] = marked.map { ["occurrence": $0.0, "note": $0.1] }
                }
                if let reason = explanation.noRRule { object["noRRule"] = reason }
                if let note = explanation.note { object["note"] = note }
                if let skips = explanation.skips { object["skips"] = skips }
                let data = try JSONSerialization.data(
                    withJSONObject: object, options: [.withoutEscapingSlashes, .sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                FileHandle.standardError.write(Data(explanation.lines().utf8))
                // An occurrence daylight saving moved or met twice says so in a second, tab-separated column.
                for (line, note) in zip(lines, notes) { print(note.map { "\(line)\t(\($0))" } ?? line) }
                if dates.isEmpty {
                    FileHandle.standardError.write(
                        Data("chime: no occurrences after \(WallClock.iso8601(start, in: zone))\n".utf8))
                }
            }
        }
    }

    /// The parts of the day as chime.toml's `[phrases]` sets them for chimed, so the preview agrees.
    func phraseDefaults(for rule: WrittenRule) throws -> PhraseDefaults {
        guard case .phrase = rule else { return .standard }
        do {
            return try DaemonSettings.load(path: DaemonSettings.defaultPath()).phraseDefaults
        } catch {
            throw fail("\(error)", .badInput)
        }
    }

    func localTime(_ text: String?, option: String, zone: Zone) throws -> Date? {
        guard let text else { return nil }
        guard let local = LocalDateTime(iso: text) else {
            throw fail("\(option): cannot read '\(text)'; expected local time such as 2026-11-22T00:00:00", .badInput)
        }
        // A local time in a gap or overlap: the first instant it can mean.
        return WallClock.instants(for: local, in: zone, policy: DSTPolicy(gap: .endOfGap, overlap: .first)).first
    }
}

extension RuleExplanation {
    /// The explanation as `chime next` and `chime send` print it on standard error:
    ///
    ///     understood: every month on the first Friday at 20:15
    ///     as RRULE:   DTSTART:20261204T201500
    ///                 RRULE:FREQ=MONTHLY;BYDAY=1FR;BYHOUR=20;BYMINUTE=15;BYSECOND=0
    func lines() -> String {
        var text = "understood: \(words)\n"
        if let rule = rruleText {
            text += "as RRULE:   " + rule.replacingOccurrences(of: "\n", with: "\n            ") + "\n"
        } else if let noRRule {
            text += "as RRULE:   none (\(noRRule))\n"
        }
        if let skips { text += "skips:      \(skips)\n" }
        if let note { text += "note:       \(note)\n" }
        return text
    }
}

/// What `chime send` prints on standard error for a repeating notification: the rule as chimed reads it
/// (a floating rule on this system's zone, unless --tz names one), with --until and --count. Nothing when
/// the rule cannot be read here (chimed has accepted it, so its own settings differ).
func explainSent(_ rule: WrittenRule, timeZone: String?, until: Date?, count: Int?) {
    let now = Date()
    guard let settings = try? DaemonSettings.load(path: DaemonSettings.defaultPath()),
        let recurrence = try? Recurrence.parse(
            rule, now: now, timeZone: timeZone.map { .named($0) } ?? .floating, systemTimeZone: .current,
            phraseDefaults: settings.phraseDefaults)
    else { return }
    var text = recurrence.explanation(after: now, systemTimeZone: .current).lines()
    // --count and --until end the entry, whatever its rule says.
    var ends: [String] = []
    if let count { ends.append(count == 1 ? "after one occurrence" : "after \(count) occurrences") }
    if let until { ends.append("after \(WallClock.iso8601(until, in: .current))") }
    if !ends.isEmpty { text += "ends:       " + ends.joined(separator: ", or ") + "\n" }
    FileHandle.standardError.write(Data(text.utf8))
}
