import Foundation

/// Placeholders in notification text, filled from an occurrence's date when the entry fires.
///
/// `{date}` `{time}` `{weekday}` `{day}` `{month}` `{year}` `{n}`; `{{` and `}}` stand for literal braces.
/// Names are English whatever the locale, because the daemon has no locale of its own and the same
/// group file must read the same on every machine.
public enum ContentTemplate {
    /// Every placeholder as written in text, with what it becomes; for docs and error messages.
    public static let placeholders: [(name: String, meaning: String)] = Field.allCases.map {
        ("{\($0.rawValue)}", $0.meaning)
    }

    /// `text` with every known placeholder replaced by its value for the occurrence at `date`, read on
    /// the wall clock of `timeZone`; `occurrence` is the 1-based occurrence number `{n}` shows.
    ///
    /// Filling never fails: an unknown placeholder or an unmatched brace stays as written, so a
    /// template that slipped past `validate(_:)` still shows something recognisable.
    public static func fill(_ text: String, date: Date, timeZone: Zone, occurrence: Int) -> String {
        // Text without braces is the common case and has nothing to fill.
        guard text.contains(where: { $0 == "{" || $0 == "}" }) else { return text }
        let local = WallClock.localDateTime(for: date, in: timeZone)
        var result = ""
        for token in scan(text).tokens {
            switch token {
            case .literal(let literal): result += literal
            case .field(let field): result += field.value(local: local, occurrence: occurrence)
            }
        }
        return result
    }

    /// `content` with the summary, subtitle and body filled as `fill(_:date:timeZone:occurrence:)` does;
    /// every other field is kept.
    public static func fill(
        _ content: NotificationContent, date: Date, timeZone: Zone, occurrence: Int
    ) -> NotificationContent {
        var filled = content
        filled.summary = fill(content.summary, date: date, timeZone: timeZone, occurrence: occurrence)
        filled.subtitle = content.subtitle.map { fill($0, date: date, timeZone: timeZone, occurrence: occurrence) }
        filled.body = fill(content.body, date: date, timeZone: timeZone, occurrence: occurrence)
        return filled
    }

    /// Checks that every `{…}` names a known placeholder and every brace is matched or doubled. The
    /// message names the first problem, its 1-based character position, and the known placeholders.
    public static func validate(_ text: String) throws(ContentError) {
        guard let problem = scan(text).problem else { return }
        let known = placeholders.map(\.name).joined(separator: ", ")
        switch problem {
        case .unknown(let name, let position):
            throw ContentError(
                "unknown placeholder {\(name)} at character \(position); known placeholders: \(known) "
                    + "(write {{ or }} for a literal brace)")
        case .unmatchedOpen(let position):
            throw ContentError(
                "unmatched { at character \(position); close the placeholder with } or write {{ for a literal "
                    + "brace; known placeholders: \(known)")
        case .unmatchedClose(let position):
            throw ContentError(
                "unmatched } at character \(position); write }} for a literal brace; known placeholders: \(known)")
        }
    }

    /// Validates the summary, subtitle and body; the message says which of them is wrong.
    public static func validate(_ content: NotificationContent) throws(ContentError) {
        let fields = [("summary", content.summary), ("subtitle", content.subtitle ?? ""), ("body", content.body)]
        for (name, text) in fields {
            do {
                try validate(text)
            } catch {
                throw ContentError("the \(name) has an \(error.message)")
            }
        }
    }

    // MARK: - Internals

    enum Field: String, CaseIterable {
        case date, time, weekday, day, month, year, n

        var meaning: String {
            switch self {
            case .date: "the occurrence's date, e.g. 2026-12-04"
            case .time: "its time of day on a 24-hour clock, e.g. 20:15"
            case .weekday: "the day of the week, e.g. Friday"
            case .day: "the day of the month, e.g. 4"
            case .month: "the month's name, e.g. December"
            case .year: "the year, e.g. 2026"
            case .n: "the occurrence's number, counting from 1"
            }
        }

        static let weekdayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        static let monthNames = [
            "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
            "November", "December",
        ]

        func value(local: LocalDateTime, occurrence: Int) -> String {
            func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
            switch self {
            case .date: return String(local.description.prefix(while: { $0 != "T" }))
            case .time: return "\(two(local.hour)):\(two(local.minute))"
            case .weekday: return Self.weekdayNames[local.isoWeekday - 1]
            case .day: return String(local.day)
            case .month: return Self.monthNames[local.month - 1]
            case .year: return String(local.year)
            case .n: return String(occurrence)
            }
        }
    }

    enum Token: Equatable {
        case literal(String)
        case field(Field)
    }

    enum Problem: Equatable {
        /// `{name}` with a name that is not a placeholder; the position is the `{`'s.
        case unknown(name: String, position: Int)
        /// A `{` with no `}` before the next `{` or the end.
        case unmatchedOpen(position: Int)
        /// A single `}` outside a placeholder.
        case unmatchedClose(position: Int)
    }

    /// Splits `text` into literal runs and placeholders, and reports the first problem. Problem text is
    /// kept as a literal, which is what `fill` shows.
    static func scan(_ text: String) -> (tokens: [Token], problem: Problem?) {
        let chars = Array(text)
        var tokens: [Token] = []
        var problem: Problem?
        var literal = ""
        var i = 0
        func flush() {
            if !literal.isEmpty { tokens.append(.literal(literal)) }
            literal = ""
        }
        while i < chars.count {
            let c = chars[i]
            let doubled = i + 1 < chars.count && chars[i + 1] == c
            if c == "{" && !doubled {
                var j = i + 1
                while j < chars.count && chars[j] != "}" && chars[j] != "{" { j += 1 }
                guard j < chars.count, chars[j] == "}" else {
                    problem = problem ?? .unmatchedOpen(position: i + 1)
                    literal.append(c)
                    i += 1
                    continue
                }
                let name = String(chars[(i + 1)..<j])
                if let field = Field(rawValue: name) {
                    flush()
                    tokens.append(.field(field))
                } else {
                    problem = problem ?? .unknown(name: name, position: i + 1)
                    literal += String(chars[i...j])
                }
                i = j + 1
            } else if c == "}" && !doubled {
                problem = problem ?? .unmatchedClose(position: i + 1)
                literal.append(c)
                i += 1
            } else {
                literal.append(c)
                i += (c == "{" || c == "}") ? 2 : 1
            }
        }
        flush()
        return (tokens, problem)
    }
}
