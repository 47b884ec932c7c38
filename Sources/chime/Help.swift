import ArgumentParser
import Foundation

/// `chime help TOPIC` and `chime help COMMAND`.
///
/// ArgumentParser gives every command with subcommands a `help` subcommand of its own; a subcommand
/// named `help` is found before it, so this one answers both the topics and the commands. It is hidden
/// from the list of subcommands and from the completion scripts, which list ArgumentParser's own `help`
/// (listing both would offer `help` twice); `chime --help` names the topics.
struct Help: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Explain a topic, or show a command's help.",
        discussion: """
            Topics: \(HelpTopic.allCases.map(\.rawValue).joined(separator: ", ")). \
            `chime help COMMAND` is `chime COMMAND --help`; `chime help` alone is `chime --help`.
            """,
        shouldDisplay: false)

    @Argument(help: ArgumentHelp("A topic, or a command.", valueName: "TOPIC|COMMAND"))
    var names: [String] = []

    func run() throws {
        guard let name = names.first else {
            print(Chime.helpMessage())
            return
        }
        if let topic = HelpTopic(rawValue: name), names.count == 1 {
            print(topic.text)
            return
        }
        guard let command = Chime.subcommands.first(where: { $0._commandName == name }) else {
            throw fail(
                "no help topic or command \"\(name)\"; topics: "
                    + HelpTopic.allCases.map(\.rawValue).joined(separator: ", ") + "; commands: "
                    + Chime.subcommandNames.joined(separator: ", "),
                .badInput)
        }
        print(Chime.helpMessage(for: command))
    }
}

/// The topics of `chime help`.
enum HelpTopic: String, CaseIterable {
    case rules, phrases, hints, actions
    case exitCodes = "exit-codes"

    var text: String {
        switch self {
        case .rules: Self.rulesText
        case .phrases: Self.phrasesText
        case .hints: Self.hintsText
        case .actions: Self.actionsText
        case .exitCodes: Self.exitCodesText
        }
    }

    static let rulesText = """
        WHEN: ONCE, OR BY A RULE

        Once (chime send):
          --at TIME        local time: 2026-12-01T09:00:00, or HH:MM (09:00, 21:30:15),
                           the next time the clock shows it
          --in DURATION    a number and a unit (s, m, h, d, w), parts combined:
                           90s, 10m, 1h30m, 2d, 1w
          neither          now

        Repeating, in one of three forms (chime send, and chime next to preview any
        rule without chimed):

        Phrases (--every), short English; the grammar is in `chime help phrases`:
          chime next --every "every weekday at 9:00"
          chime next --every "every month on the first friday at 20:15" --count 3
          chime next --every "every 2 hours for 1 day"

        RFC 5545 RRULE (--rrule), from --dtstart (local time; default now):
          chime next --rrule "FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=8;BYMINUTE=15"
          chime next --rrule "FREQ=MONTHLY;BYDAY=-1FR" --dtstart 2026-12-01T09:00:00

        systemd OnCalendar (--on-calendar), as in systemd.time(7):
          chime next --on-calendar "Mon..Fri *-*-* 09:00"
          chime next --on-calendar "*-*-01 12:00:00" --count 3

        A rule follows the system's time zone (whoever travels keeps 09:00) unless
        --tz ZONE pins it to an IANA zone such as Europe/Berlin (a phrase's own
        `in ZONE` wins over --tz). --until TIME ends it,
        --count N fires it at most N times. At a spring-forward gap a time inside the
        gap fires when the gap ends; at a fall-back overlap it fires once, the first
        time. A rule that never fires is refused by chime send (exit status 2); chime
        next reports it with exit status 3. Both print on standard error what the
        rule was understood as, in words and as an equivalent RRULE; a misspelt word
        is answered with its position and the word it is probably a slip for.
        """

    /// The grammar is docs/rule-phrases.md's, word for word (a test compares them).
    static let phrasesText = """
        RULE PHRASES (chime send --every, chime next --every, every = in group files)

        Words are case-insensitive; commas may follow any word.

        ```ebnf
        phrase       = [ "at" times ] ( once | repeating )    (* at 8am every day: the time first *)
                     | interval | window ;

        once         = ( "today" | "tomorrow" | "on" date ) ( "at" time-spec | time | part-of-day ) [ zone ]
                     | "tonight" [ "at" time-spec ] [ zone ]               (* today at night *)
                     | "in" ( count | "a" | "an" ) unit ;                 (* relative to now *)

        interval     = ( "every" [ count ] clock-unit | "hourly"
                       | "every" [ "a" | "an" ] ( "half" | "quarter" ) "hour" ) { interval-mod } ;  (* instants from now *)
        interval-mod = "for" count unit | "until" date | zone ;
        window       = ( "every" [ count ] clock-unit | "hourly" )        (* every hour from 9am to 5pm: 9:00 … 17:00 *)
                       ( "from" clock ( "to" | "till" | "until" | "-" ) clock | "between" clock "and" clock )
                       [ "on" ( week-days | "weekdays" ) ] { modifier } ;

        repeating    = ( "every" | "each" ) [ count ] period { modifier }
                     | shorthand { modifier }                (* without a time: the default time, 09:00 *)
                     | [ "on" ] plural-days { modifier }                  (* weekdays at 7:15, on mondays *)
                     | [ "on" ] month-days "of" ( "every" | "each" ) "month" { modifier }  (* the 1st of every month *)
                     | times-a-day { modifier } ;
        times-a-day  = ( "twice" | "thrice" | count "times" ) ( "a" | "per" ) "day"  (* as many times after "at" *)
                     | "once" ( "a" | "per" ) ( "day" | "week" [ "on" week-days ] | "month" [ "on" month-days ]
                                              | "year" [ "on" year-day ] ) ;
        plural-days  = "weekdays" | "workdays" | "weekends" | "mondays" | … | "sundays" ;
        shorthand    = "daily" | "everyday"                               (* every day *)
                     | "weekly" [ "on" week-days ]                        (* every week *)
                     | ( "biweekly" | "fortnightly" ) [ "on" week-days ]  (* every 2 weeks; see [phrases] biweekly *)
                     | "monthly" [ "on" month-days ]                      (* every month *)
                     | ( "yearly" | "annually" ) [ "on" year-day ] ;      (* every year *)
        period       = ( "day" | "days" )
                     | ( "week" | "weeks" ) [ "on" week-days ]            (* no "on": the first day of the week *)
                     | week-days                                          (* every mon, wed, fri; every mon-fri *)
                     | "weekday" | "weekdays" | "workday" | "workdays"    (* monday to friday *)
                     | ( "weekend" | "weekends" ) [ "day" | "days" ]      (* the weekend's two days *)
                     | part-of-day                                        (* every morning: every day at 09:00 *)
                     | ( "month" | "months" ) [ "on" month-days ]         (* no "on": the first day *)
                     | "quarter" [ "on" month-days ]                      (* every 3 months *)
                     | month-days [ "of" ( [ "the" ] | "every" | "each" ) "month" ]  (* every 27th, every 27 *)
                     | ( "year" | "years" ) [ "on" year-day ]             (* no "on": january 1 *)
                     | year-day ;                                         (* every jan 27th, every 24 december *)
        modifier     = "at" times | time | part-of-day | "in" "the" part-of-day
                     | "for" count unit | "until" date | "starting" start | "except" ( week-days | "weekends" ) | zone ;

        part-of-day  = "morning" | "afternoon" | "evening" | "night" ;   (* 09:00, 14:00, 18:00, 21:00 *)
        week-days    = week-day { [ sep ] week-day } ;                    (* monday wednesday friday *)
        week-day     = [ "the" ] ( weekday | "first" "day" | "last" "day"
                                 | "weekend" "start" "day" | "weekend" "end" "day" )
                     | weekday ( "-" | "to" | "through" | "thru" ) weekday ;  (* mon-fri, fri-mon *)
        month-days   = month-day { sep month-day } ;          (* the 2nd and 4th tuesday: both tuesdays *)
        month-day    = [ "the" ] ( ordinal weekday | ( "first" | "last" ) "day" | nth | number ) | "day" number
                     | [ "the" ] ( ordinal | nth ) ( "weekday" | "workday" )   (* the 3rd monday-to-friday day *)
                     | [ "the" ] ( ordinal | nth ) "to" "last" ( "day" | "weekday" )  (* second to last day *)
                     | [ "the" ] "penultimate" ( "day" | "weekday" ) ;
        year-day     = [ "the" ] ( "first" | "last" ) "day" [ "of" "the" "year" ]  (* after "year on" *)
                     | month-name ( day-number | nth ) | ( day-number | nth ) month-name
                     | month-day "of" month-name ;                        (* the first friday of march *)

        times        = time-spec | clock { sep clock } ;                  (* at 9am and 5pm, at 6, 12 and 18 *)
        time-spec    = time | [ "a" ] "random" "time" "between" time "and" time ;
        clock        = time | H ;                     (* after "at": a bare hour is 24-hour, 9 = 09:00, 21 = 21:00 *)
        time         = ( H ":" MM [ ":" SS ]                              (* 24-hour: 9:00, 20:15, 07:30:15 *)
                       | H [ ":" MM ] ( "am" | "pm" ) )                   (* 8pm, 8:15am, 8 pm *)
                       [ "in" "the" ( "morning" | "afternoon" | "evening" ) | "at" "night" ]  (* 7 in the evening: 19:00 *)
                     | "noon" | "midnight" | part-of-day ;
        start        = "today" | "tomorrow" | ( "this" | "next" ) ( "week" | "month" | "year" ) | date ;
        zone         = "in" iana-zone-name ;                              (* in Europe/Berlin *)
        date         = YYYY "-" MM "-" DD
                     | month-name ( day-number | nth ) [ [ "," ] YYYY ]   (* november 28: the next one *)
                     | [ "the" ] ( day-number | nth ) [ "of" ] month-name [ YYYY ] ;
        count        = positive-integer | "other"                         (* every other day = every 2 days *)
                     | nth | "second" | "third" | … ;                     (* before day, week, month, year: every 2nd day *)
        ordinal      = "first" | "second" | "third" | "fourth" | "fifth" | "last" | "1st" | … | "5th" ;
        nth          = "1st" | "2nd" | "3rd" | "4th" … "31st" ;
        weekday      = "monday" | "mon" | … | "sunday" | "sun" ;
        month-name   = "january" | "jan" | … | "september" | "sep" | "sept" | … | "december" | "dec" ;
        unit         = clock-unit | "day(s)" | "week(s)" | "wk(s)" | "month(s)" | "mo(s)" | "year(s)" | "yr(s)" ;
        clock-unit   = "second(s)" | "sec(s)" | "minute(s)" | "min(s)" | "hour(s)" | "hr(s)" ;
        sep          = "," | "and" | "," "and" ;
        ```

        Examples:
          chime next --every "every month on the first friday at 20:15"
          chime next --every "every day at 9:00 for 50 days"
          chime next --every "every monday, wednesday and friday at 8:15am"
          chime next --every "every year on the first friday of march at 9:00"
          chime next --every "every day at a random time between 15:00 and 19:00"
          chime next --every "every other day at 6:00 for 1 week"
          chime next --every "tomorrow at 20:15"
          chime next --every "in 10 minutes"
          chime next --every "every workday at 8:30"
          chime next --every "every 3rd friday at 17:00"
          chime next --every "every last friday of the month at 17:00"
          chime next --every "every 1st and 15th"
          chime next --every "every jan 27th"
          chime next --every "every weekday at 9:00 in America/New_York"
          chime next --every "every monday at 9"
          chime next --every "every day at 9am and 5pm"
          chime next --every "weekdays at 7:15"
          chime next --every "every hour from 9am to 5pm"
          chime next --every "every weekday except friday at 8"
          chime next --every "every last weekday of the month"
          chime next --every "every day until november 28"

        A bare hour after "at" is 24-hour (at 9 is 09:00); "in the evening" or
        "every evening" moves 1 to 11 to the afternoon (at 7 in the evening is 19:00).
        Several times a day are one rule. biweekly is every 2 weeks ([phrases] biweekly
        = "twice-a-week" reads it as the two days named). "every 3rd weekday" is the
        3rd Monday-to-Friday day of each month. A date in words (until november 28) is
        the next such day.
        A repeating phrase without a time fires at 09:00; morning, afternoon, evening
        and night are 09:00, 14:00, 18:00 and 21:00 (chime.toml's [phrases] sets them).
        weekly, monthly and yearly fall on the first day of the week, month and year.
        Days that do not exist are skipped (every month on the 31st fires in months
        with 31 days). `for N units` counts whole periods; `until DATE` includes that
        day. Without `in ZONE` a rule follows the system zone (or --tz); `in ZONE` wins
        over --tz. What each word means, with more examples: rule-phrases.md, installed
        with chime's documentation.
        """

    static let hintsText = """
        HINTS (chime send -h TYPE:NAME:VALUE, repeatable, as notify-send takes them)

        TYPE is string, int, double, byte or boolean (also bool):
          chime send -h string:x-dunst-stack-tag:volume -h int:value:50 "Volume 50%"
          chime send -h boolean:resident:true "Build finished"
          chime send -h string:desktop-entry:org.gnome.Calendar "Meeting at 10"

        The hints the specification names (an option that sets one too wins over -h):
          urgency          byte 0, 1 or 2; also -u low|normal|critical
          category         string, e.g. email.arrived; also -c, which also adds the
                           actions of your category of actions by that id
          desktop-entry    string, the app's desktop file name without .desktop
          sound-name       string, a sound theme name such as message-new-instant
          transient        boolean; also -e
          resident, suppress-sound, action-icons   boolean
          image-path, sound-file                   string
          x, y             int, where the popup should appear
        Other names (x-dunst-stack-tag, value, x-kde-…) go to the server as they are;
        what each server does with them is up to the server.
        """

    static let actionsText = """
        ACTIONS (chime send -A KEY=LABEL, repeatable)

        A button: KEY is what is reported when it is chosen, LABEL is shown.
        -A LABEL alone is keyed by its position (0, 1, …). With -w, chime send prints
        the key of each action chosen until the notification closes.

        Built-in verbs, carried out by chimed itself, with no app running:
          stop-repeat       the item fires no more; its pending snoozes go too
          snooze            the notification comes back in 10 minutes, with the same
                            buttons, replacing its own popup
          snooze:DURATION   the same after DURATION (snooze:10m, snooze:1h30m)
          skip-next         the next occurrence is skipped (recorded as missed)
          dismiss           the popup is closed
        For example:
          chime send --every "every day at 9:00" -A stop-repeat="Stop Repeat" \\
            -A snooze:10m="Snooze 10 min" "Pizza Time"
          chime snooze 12 15m       the same as Snooze on item 12's latest popup

        A category of actions, declared in a group file ([category.NAME]), adds its
        buttons to each notification of an entry that names it (category = "NAME"),
        and to chime send -c NAME. Every action is recorded in chime history.
        """

    static let exitCodesText = """
        EXIT STATUS (every chime command)

          0  success
          1  chimed or the bus failed: chimed is not running (start it with
             `systemctl --user start chimed`), no session bus, or chimed could not
             store the change (nothing changed)
          2  bad input: an unknown option, a missing or malformed value, a time in
             the past, or a request chimed refuses (a rule that cannot be read or
             never fires, a group from a file in the groups folder, a group that is
             turned off, too many items)
          3  not found: no such item or group (chime cancel, snooze, remove, group);
             for chime next, a rule that never fires

        An error is one line on stderr, starting with `chime: `, that says what to do.
        """
}
