import ChimeCore
import Foundation

/// Reads one `[[entry]]` of a group file into a `TimelineEntry`, checking every key where it is written.
struct EntryReader {
    let fields: TableReader
    /// The group's `app-name`, which an entry's own overrides.
    let appName: String?
    let now: Date
    let timeZone: Zone

    static let ruleKeys = ["every", "rrule", "on-calendar", "at"]
    static let knownKeys =
        ["id"] + ruleKeys + [
            "dtstart", "tz", "until", "count", "offset", "escalate-every", "escalate-times", "wake", "app-name",
            "summary",
            "subtitle",
            "body", "markup", "icon", "sound", "urgency",
            "expire-timeout", "category", "actions", "template", "user-info", "pool", "command", "callback",
        ]

    /// `number` is the entry's 1-based position in the file, which names an entry that has no id.
    init(file: String, table: ConfigTable, number: Int, appName: String?, now: Date, timeZone: Zone) {
        let name: String
        if case .string(let id)? = table["id"]?.kind {
            name = "entry \"\(id)\""
        } else {
            name = "entry number \(number)"
        }
        self.fields = TableReader(file: file, table: table, name: name)
        self.appName = appName
        self.now = now
        self.timeZone = timeZone
    }

    /// How messages name this entry.
    var name: String { fields.name }

    func entry() throws(ConfigError) -> TimelineEntry {
        try fields.rejectUnknownKeys(Self.knownKeys) { key in
            GroupFile.groupKeys.contains(key) ? "\(key) belongs to the group: move it above the first [[entry]]" : nil
        }
        guard let id = try fields.string("id", example: "\"morning\"") else {
            throw fields.fail(nil, "\(name) has no id; add id = \"morning\" (letters, digits, '-', '_', '.'; unique)")
        }
        do {
            try TimelineGroup.validateIdentifier(id, what: "entry id")
        } catch {
            throw fields.fail("id", error.message)
        }
        let zoneName = try ruleZone()
        let dateZone = zoneName.flatMap { Zone(identifier: $0) } ?? timeZone
        let trigger = try readTrigger(zoneName: zoneName, dateZone: dateZone)
        var endDate: Date?
        if let value = fields.table["until"] { endDate = instant(try localDateTime(value, key: "until"), in: dateZone) }
        var maximumOccurrences: Int?
        if let count = try fields.integer("count", example: "50") {
            guard count >= 1 else {
                throw fields.fail("count", "count must be at least 1; remove it for no limit")
            }
            maximumOccurrences = count
        }
        var category: String?
        if let text = try fields.string("category", example: "\"quote\"") {
            guard !text.isEmpty else { throw fields.fail("category", "category is empty; give a name or remove it") }
            category = text
        }
        return TimelineEntry(
            id: id, trigger: trigger, content: try content(), category: category, endDate: endDate,
            maximumOccurrences: maximumOccurrences, escalation: try escalation(), offset: try offset(trigger),
            wake: try fields.boolean("wake") ?? false)
    }

    /// `offset = "-15m"`: each occurrence of the rule this long early (or late, without the minus).
    private func offset(_ trigger: EntryTrigger) throws(ConfigError) -> OccurrenceOffset? {
        guard let text = try fields.string("offset", example: "\"-15m\"") else { return nil }
        if case .at = trigger {
            throw fields.fail("offset", "offset moves a rule's occurrences; a one-off (at) has none: move at instead")
        }
        do {
            let offset = try OccurrenceOffset.parse(text)
            return offset.isZero ? nil : offset
        } catch {
            throw fields.fail("offset", "offset: \(error)")
        }
    }

    /// `escalate-every` and `escalate-times`: each occurrence shown again while nobody reacts to it.
    private func escalation() throws(ConfigError) -> Escalation? {
        let times = try fields.integer("escalate-times", example: "3")
        guard let every = try fields.duration("escalate-every", example: "\"5m\"") else {
            guard times == nil else {
                throw fields.fail(
                    "escalate-times", "escalate-times goes with escalate-every; add escalate-every = \"5m\"")
            }
            return nil
        }
        let escalation = Escalation(every: every, times: times ?? Escalation.defaultTimes)
        guard escalation.problem == nil else {
            let key =
                (times.map { (1...Escalation.maximumTimes).contains($0) } ?? true) ? "escalate-every" : "escalate-times"
            throw fields.fail(key, "\(escalation.problem!); e.g. escalate-every = \"5m\", escalate-times = 3")
        }
        return escalation
    }

    // MARK: - When

    /// `tz`, checked against the system's zone database.
    private func ruleZone() throws(ConfigError) -> String? {
        guard let zone = try fields.string("tz", example: "\"Europe/Berlin\"") else { return nil }
        guard Zone(identifier: zone) != nil else {
            throw fields.fail(
                "tz", "unknown time zone \"\(zone)\"; use an IANA name such as Europe/Berlin or America/New_York")
        }
        return zone
    }

    private func readTrigger(zoneName: String?, dateZone: Zone) throws(ConfigError) -> EntryTrigger {
        let written = fields.table.fields.filter { Self.ruleKeys.contains($0.key) }
        guard let (key, value) = written.first else {
            throw fields.fail(
                nil,
                "\(name) has no time; add one of every = \"every day at 9:00\", rrule = \"FREQ=WEEKLY;BYDAY=MO\", "
                    + "on-calendar = \"Mon *-*-* 09:00\" or at = \"2026-12-01T09:00:00\"")
        }
        if written.count > 1 {
            let second = written[1].key
            throw fields.fail(
                second, "\(name) has both \(key) and \(second); keep one of every, rrule, on-calendar and at")
        }
        if key != "rrule", fields.has("dtstart") {
            throw fields.fail("dtstart", "dtstart applies only with rrule; remove it, or write the rule as rrule")
        }
        let rule: WrittenRule
        switch key {
        case "at":
            return .at(instant(try localDateTime(value, key: "at"), in: dateZone))
        case "every":
            let text = try required("every", example: "\"every day at 9:00\"")
            if let first = text.split(separator: " ").first?.lowercased(), ["in", "today", "tomorrow"].contains(first) {
                throw fields.fail(
                    "every",
                    "every = \"\(text)\" means a different time each time the file is read; "
                        + "for a one-off write at = \"2026-12-01T09:00:00\", for a repeat start with \"every\"")
            }
            rule = .phrase(text)
        case "rrule":
            let text = try required("rrule", example: "\"FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0\"")
            var dtstart: LocalDateTime?
            if let value = fields.table["dtstart"] { dtstart = try localDateTime(value, key: "dtstart") }
            rule = .rrule(text, dtstart: dtstart)
        default:
            rule = .onCalendar(try required("on-calendar", example: "\"Mon *-*-* 09:00\""))
        }
        let recurrence: Recurrence
        do {
            recurrence = try Recurrence.parse(
                rule, now: now, timeZone: zoneName.map { .named($0) } ?? .floating, systemTimeZone: timeZone)
        } catch {
            throw fields.fail(key, "\(key): \(error)")
        }
        // The same check as chimed's: a rule it cannot follow fails here, with the file and line.
        do {
            _ = try recurrence.admissionCheck(after: now, systemTimeZone: timeZone)
        } catch  where error.kind == .noOccurrenceAfter {
            // An entry whose rule has ended is done, as chimed takes it.
        } catch  where error.kind == .neverFires {
            throw fields.fail(key, "\(key): the rule never fires (no date matches it); check its days and months")
        } catch {
            throw fields.fail(key, "\(key): \(error.description)")
        }
        return .rule(rule, timeZone: zoneName)
    }

    /// A key that must be non-empty text.
    private func required(_ key: String, example: String) throws(ConfigError) -> String {
        guard let text = try fields.string(key, example: example), !text.isEmpty else {
            throw fields.fail(key, "\(key) is empty; e.g. \(key) = \(example)")
        }
        return text
    }

    /// A local date and time: `"2026-12-01T09:00:00"`, or the same without quotes (a TOML local
    /// date-time); a date alone means its midnight.
    private func localDateTime(_ value: ConfigValue, key: String) throws(ConfigError) -> LocalDateTime {
        let help = "\(key) must be a local date and time such as \"2026-12-01T09:00:00\""
        switch value.kind {
        case .string(let text):
            guard let local = LocalDateTime(iso: text) else {
                throw fields.fail(key, "\(key) = \"\(text)\" is not a date; \(help) (the zone comes from tz)")
            }
            return local
        case .dateTime(let dateTime) where dateTime.offset == nil:
            return LocalDateTime(
                year: dateTime.date.year, month: dateTime.date.month, day: dateTime.date.day,
                hour: dateTime.time.hour, minute: dateTime.time.minute, second: dateTime.time.second)
        case .date(let date):
            return LocalDateTime(year: date.year, month: date.month, day: date.day)
        case .dateTime:
            throw fields.fail(key, "\(help), without a UTC offset; set tz for the zone")
        default:
            throw fields.fail(key, "\(help), not \(value.kindName)")
        }
    }

    /// A local date and time read on `zone`'s clock, as the default DST policy reads rules: a time skipped
    /// by a DST change means the end of the gap, a time that occurs twice the first.
    private func instant(_ local: LocalDateTime, in zone: Zone) -> Date {
        switch WallClock.resolve(local, in: zone) {
        case .unique(let instant): instant
        case .gap(let transition): transition
        case .overlap(let first, _): first
        }
    }

    // MARK: - What

    private func content() throws(ConfigError) -> ContentSource {
        let template = try fields.boolean("template") ?? false
        let base = try baseContent(checkingPlaceholders: template)
        let sources = fields.table.fields.map(\.key).filter(["pool", "command", "callback"].contains)
        if sources.count > 1 {
            throw fields.fail(
                sources[1],
                "\(name) has both [entry.\(sources[0])] and [entry.\(sources[1])]; keep one source of content")
        }
        let source: ContentSource
        switch sources.first {
        case "pool"?:
            source = .pool(try pool(base: base, template: template))
        case let kind?:
            if template {
                throw fields.fail(
                    "template", "template = true applies to fixed text and pools, not to [entry.\(kind)]; remove it")
            }
            try requireSummary(base)
            source = kind == "command" ? .command(try command(base: base)) : .callback(try callback(base: base))
        case nil:
            try requireSummary(base)
            source = template ? .template(base) : .fixed(base)
        }
        // The parts were checked with their lines above; these catch the limits (sizes, counts) that only
        // ChimeCore knows, at the line of the entry.
        do {
            try source.validate()
        } catch {
            throw fields.fail(nil, "\(name): \(error.message)")
        }
        return source
    }

    private func requireSummary(_ base: NotificationContent) throws(ConfigError) {
        guard base.summary.isEmpty else { return }
        throw fields.fail(fields.has("summary") ? "summary" : nil, "\(name) has no summary; add summary = \"…\"")
    }

    /// The entry's own fields: the content of a fixed entry, the base of a pool, the fallback of a command
    /// or call back.
    private func baseContent(checkingPlaceholders: Bool) throws(ConfigError) -> NotificationContent {
        var content = NotificationContent(summary: try fields.string("summary", example: "\"Stand-up\"") ?? "")
        content.appName = try fields.string("app-name", example: "\"Quotes\"") ?? appName ?? ""
        content.subtitle = try fields.string("subtitle", example: "\"Room 4\"")
        content.body = try fields.string("body", example: "\"Bring the notes\"") ?? ""
        content.markup = try fields.boolean("markup") ?? false
        content.icon = try fields.string("icon", example: "\"appointment-soon\"") ?? ""
        content.sound = try fields.string("sound", example: "\"message-new-instant\"")
        if let name = try fields.string("urgency", example: "\"low\"") {
            guard let urgency = Urgency(name: name) else {
                throw fields.fail(
                    "urgency", "urgency = \"\(name)\" is not an urgency; use \"low\", \"normal\" or \"critical\"")
            }
            content.urgency = urgency
        }
        if let timeout = try fields.integer("expire-timeout", example: "10000") {
            guard timeout >= -1, timeout <= Int(Int32.max) else {
                throw fields.fail(
                    "expire-timeout",
                    "expire-timeout must be milliseconds, or -1 for the server's default, or 0 for never")
            }
            content.expireTimeout = Int32(timeout)
        }
        content.actions = try actions()
        content.userInfo = try userInfo().mapValues(UserInfoValue.string)
        if checkingPlaceholders {
            for key in ["summary", "subtitle", "body"] {
                if case .string(let text)? = fields.table[key]?.kind { try checkPlaceholders(text, key: key) }
            }
        }
        return content
    }

    /// `KEY=LABEL`, or a label alone keyed by its position, as `chime send -A` reads them.
    private func actions() throws(ConfigError) -> [NotificationAction] {
        let example = "[\"stop-repeat=Stop Repeat\", \"snooze:10m=Snooze 10 min\"]"
        guard let texts = try fields.strings("actions", example: example) else { return [] }
        var actions: [NotificationAction] = []
        for (index, text) in texts.enumerated() {
            let action: NotificationAction
            if let eq = text.firstIndex(of: "=") {
                action = NotificationAction(
                    key: String(text[..<eq]), label: String(text[text.index(after: eq)...]))
            } else {
                action = NotificationAction(key: String(index), label: text)
            }
            // The element's own line, so that the wrong one of a list written over several lines is named.
            var element: ConfigValue?
            if case .array(let elements)? = fields.table["actions"]?.kind, index < elements.count {
                element = elements[index]
            }
            func fail(_ reason: String) -> ConfigError {
                element.map { fields.fail(at: $0, key: "actions", reason) } ?? fields.fail("actions", reason)
            }
            guard !action.key.isEmpty else { throw fail("the action \"\(text)\" has an empty key; write KEY=LABEL") }
            guard !actions.contains(where: { $0.key == action.key }) else {
                throw fail("the action key \"\(action.key)\" appears twice; give every action its own key")
            }
            actions.append(action)
        }
        return actions
    }

    private func userInfo() throws(ConfigError) -> [String: String] {
        guard let value = fields.table["user-info"] else { return [:] }
        guard case .table(let table) = value.kind else {
            throw fields.fail("user-info", "user-info must be a table of texts, e.g. user-info = { key = \"value\" }")
        }
        var info: [String: String] = [:]
        for field in table.fields {
            guard case .string(let text) = field.value.kind else {
                throw fields.fail(
                    at: field.value, key: "user-info",
                    "user-info \(field.key) must be text in quotes, not \(field.value.kindName)")
            }
            info[field.key] = text
        }
        return info
    }

    /// Reports an unknown placeholder at `key`'s line, or at `element`'s for a pool item.
    private func checkPlaceholders(
        _ text: String, key: String, in element: ConfigValue? = nil, what: String? = nil
    ) throws(ConfigError) {
        guard let unknown = TemplatePlaceholders.firstUnknown(in: text) else { return }
        let reason =
            "unknown placeholder \(unknown) in \(what ?? key); the placeholders are \(TemplatePlaceholders.written)"
        throw element.map { fields.fail(at: $0, key: key, reason) } ?? fields.fail(key, reason)
    }

    // MARK: - Content sources

    private func pool(base: NotificationContent, template: Bool) throws(ConfigError) -> ContentPool {
        guard let section = try fields.subtable("pool", name: "entry.pool") else {
            throw fields.fail("pool", "pool is missing")
        }
        try section.rejectUnknownKeys(["order", "items"], misplaced: misplacedEntryKey("pool"))
        var order = ContentPool.Order.shuffled
        if let name = try section.string("order", example: "\"shuffled\"") {
            guard let chosen = ContentPool.Order(rawValue: name) else {
                throw section.fail(
                    "order", "order = \"\(name)\" is not an order; use \"random\", \"in-order\" or \"shuffled\"")
            }
            order = chosen
        }
        guard let value = section.table["items"], case .array(let elements) = value.kind else {
            let reason = "[entry.pool] needs items, a list of texts: items = [\"one\", \"two\"]"
            throw section.fail(section.has("items") ? "items" : nil, reason)
        }
        var items: [ContentPool.Item] = []
        for (index, element) in elements.enumerated() {
            let item = try poolItem(element, number: index + 1, section: section)
            if template {
                for text in [item.summary, item.body].compactMap(\.self) {
                    try checkPlaceholders(text, key: "items", in: element, what: "pool item \(index + 1)")
                }
            }
            items.append(item)
        }
        guard let firstEnabled = items.first(where: \.enabled) else {
            throw section.fail(
                "items", "the pool has no enabled item; add an item, or set enabled = true on one")
        }
        guard items.count <= ContentPool.maximumItems else {
            throw section.fail(
                "items", "the pool has \(items.count) items, more than the \(ContentPool.maximumItems) allowed")
        }
        var base = base
        if base.summary.isEmpty {
            // Without an entry summary every item shown needs its own; the first stands for the entry in
            // listings, which show the base.
            if let (index, _) = items.enumerated().first(where: { $0.element.enabled && $0.element.summary == nil }) {
                throw section.fail(
                    at: elements[index], key: "items",
                    "pool item \(index + 1) has no summary and \(name) has none; add summary = \"…\" to the entry "
                        + "(for every item without one) or write this item as { body = \"…\", summary = \"…\" }")
            }
            base.summary = firstEnabled.summary ?? ""
        }
        return ContentPool(base: base, items: items, order: order, fillsPlaceholders: template)
    }

    private func poolItem(_ element: ConfigValue, number: Int, section: TableReader) throws(ConfigError)
        -> ContentPool.Item
    {
        func fail(_ reason: String) -> ConfigError { section.fail(at: element, key: "items", reason) }
        switch element.kind {
        case .string(let body):
            return ContentPool.Item(body: body)
        case .table(let table):
            let known = ["body", "summary", "enabled"]
            for field in table.fields where !known.contains(field.key) {
                var reason = "unknown key \(field.key) in pool item \(number)"
                if let close = TableReader.closest(to: field.key, in: known) { reason += "; did you mean \(close)?" }
                throw fail(reason + " Known keys: body, summary, enabled")
            }
            let item = TableReader(file: fields.file, table: table, name: "pool item \(number)")
            do throws(ConfigError) {
                guard let body = try item.string("body", example: "\"text\"") else {
                    throw fail("pool item \(number) has no body; write it as { body = \"…\" }")
                }
                return ContentPool.Item(
                    summary: try item.string("summary", example: "\"Title\""), body: body,
                    enabled: try item.boolean("enabled") ?? true)
            } catch  where !error.reason.hasPrefix("pool item") {
                // The item's keys share its line; the message names the item so it is clear which one.
                throw ConfigError(file: error.file, line: error.line, reason: "pool item \(number): \(error.reason)")
            }
        default:
            throw fail("pool item \(number) must be text or { body = \"…\", summary = \"…\" }, not \(element.kindName)")
        }
    }

    /// An entry key written below `[entry.SECTION]` belongs above it.
    private func misplacedEntryKey(_ section: String) -> (String) -> String? {
        { key in
            Self.knownKeys.contains(key) ? "\(key) belongs to the entry: move it above [entry.\(section)]" : nil
        }
    }

    private func command(base: NotificationContent) throws(ConfigError) -> CommandSource {
        guard let section = try fields.subtable("command", name: "entry.command") else {
            throw fields.fail("command", "command is missing")
        }
        try section.rejectUnknownKeys(["run", "timeout", "output"], misplaced: misplacedEntryKey("command"))
        let example = "[\"fortune\", \"-s\"]"
        guard let arguments = try section.strings("run", example: example) else {
            throw section.fail(nil, "[entry.command] needs run, the program and its arguments: run = \(example)")
        }
        guard let program = arguments.first, !program.isEmpty else {
            throw section.fail("run", "run is empty; give the program and its arguments, e.g. run = \(example)")
        }
        var command = CommandSource(arguments: arguments, base: base)
        if let timeout = try section.duration("timeout", example: "\"5s\"") {
            guard timeout <= 60 else {
                throw section.fail("timeout", "the command timeout must be at most 60s; the program is killed after it")
            }
            command.timeout = timeout
        }
        if let name = try section.string("output", example: "\"body\"") {
            guard let output = CommandSource.Output(rawValue: name) else {
                throw section.fail(
                    "output", "output = \"\(name)\" is not an output; use \"body\" or \"summary-and-body\"")
            }
            command.output = output
        }
        return command
    }

    private func callback(base: NotificationContent) throws(ConfigError) -> CallbackSource {
        guard let section = try fields.subtable("callback", name: "entry.callback") else {
            throw fields.fail("callback", "callback is missing")
        }
        try section.rejectUnknownKeys(["bus-name", "timeout"], misplaced: misplacedEntryKey("callback"))
        guard let busName = try section.string("bus-name", example: "\"org.example.App\""), !busName.isEmpty else {
            throw section.fail(
                section.has("bus-name") ? "bus-name" : nil,
                "[entry.callback] needs bus-name, the app's D-Bus name: bus-name = \"org.example.App\"")
        }
        var callback = CallbackSource(busName: busName, fallback: base)
        if let timeout = try section.duration("timeout", example: "\"1s\"") {
            guard timeout <= 10 else {
                throw section.fail(
                    "timeout", "the call back timeout must be at most 10s; after it the entry's own text is shown")
            }
            callback.timeout = timeout
        }
        return callback
    }
}
