import Testing

@testable import ChimeCore

@Suite struct PermissionStrategyTextTests {
    static let prompt = PermissionPrompt(
        title: "A quote every morning?", message: "One short quote at 9:00.", allowLabel: "Yes", denyLabel: "No")

    /// Every kind of strategy and its canonical text.
    static let canonical: [(PermissionStrategy, String)] = [
        (.askSystemPermissionIfNeeded, "ask-system-permission-if-needed"),
        (.scheduleIfSystemAllowed, "schedule-if-system-allowed"),
        (
            PermissionStrategy(group: .allowAutomatically, system: .askPermission),
            "group=allow-automatically,system=ask"
        ),
        (
            PermissionStrategy(group: .askPermission(.once, prompt), system: .ifAlreadyAllowed),
            "group=ask-once,system=if-already-allowed"
        ),
        (
            PermissionStrategy(group: .askPermission(.alwaysIfNotAllowed, prompt), system: .askPermission),
            "group=ask-always-if-not-allowed,system=ask"
        ),
        (
            PermissionStrategy(group: .ifAlreadyAllowed, system: .ifAlreadyAllowed),
            "group=if-already-allowed,system=if-already-allowed"
        ),
        (
            PermissionStrategy(group: .ifAllowed(otherGroup: "tips"), system: .askPermission),
            "group=if-allowed:tips,system=ask"
        ),
    ]

    @Test(arguments: canonical)
    func aStrategyIsWrittenAsItsCanonicalText(_ strategy: PermissionStrategy, _ text: String) {
        #expect(strategy.text == text)
        #expect(strategy.description == text)
    }

    @Test(arguments: canonical)
    func theCanonicalTextParsesBackWithTheSamePrompt(_ strategy: PermissionStrategy, _ text: String) throws {
        #expect(try PermissionStrategy(parsing: text, prompt: Self.prompt) == strategy)
    }

    @Test func parsingWithoutAPromptGivesTheDefaultPrompt() throws {
        #expect(
            try PermissionStrategy(parsing: "group=ask-once,system=ask")
                == PermissionStrategy(group: .askPermission(.once, PermissionPrompt()), system: .askPermission))
    }

    @Test(arguments: [
        ("  Schedule-If-System-Allowed ", PermissionStrategy.scheduleIfSystemAllowed),
        ("system=ask", .askSystemPermissionIfNeeded),
        ("group=bypass,system=if-already-allowed", .scheduleIfSystemAllowed),
        (
            "system=ask,group=allow-automatically",
            PermissionStrategy(group: .allowAutomatically, system: .askPermission)
        ),
        (
            " group = if-already-allowed , system = ask ",
            PermissionStrategy(group: .ifAlreadyAllowed, system: .askPermission)
        ),
        (
            "GROUP=Ask-Always-If-Not-Allowed,SYSTEM=IF-ALREADY-ALLOWED",
            PermissionStrategy(group: .askPermission(.alwaysIfNotAllowed, prompt), system: .ifAlreadyAllowed)
        ),
        (
            "group=IF-ALLOWED:Daily_Quote.v2,system=ask",
            PermissionStrategy(group: .ifAllowed(otherGroup: "Daily_Quote.v2"), system: .askPermission)
        ),
    ])
    func otherSpellingsParseToo(_ text: String, _ strategy: PermissionStrategy) throws {
        #expect(try PermissionStrategy(parsing: text, prompt: Self.prompt) == strategy)
    }

    static let strategyWords =
        "ask-system-permission-if-needed, schedule-if-system-allowed, or pairs such as group=ask-once,system=ask"
    static let groupWords =
        "a group strategy: bypass, allow-automatically, ask-once, ask-always-if-not-allowed, if-already-allowed or"
        + " if-allowed:OTHER-GROUP"
    static let otherGroupWords =
        "a group id of letters, digits, '-', '_' and '.' after if-allowed:, such as if-allowed:daily-quote"

    /// Bad text, and the 0-based offset, the token and what was expected that the error names.
    static let errors: [(String, Int, String, String)] = [
        ("", 0, "", strategyWords),
        ("   ", 3, "", strategyWords),
        ("ask", 0, "ask", strategyWords),
        ("group=ask-twice,system=ask", 6, "ask-twice", groupWords),
        ("group=if-allowed,system=ask", 6, "if-allowed", groupWords),
        ("group=,system=ask", 6, ",", groupWords),
        ("group=ask-once,system=maybe", 22, "maybe", "a system strategy: ask or if-already-allowed"),
        (
            "group=ask-once", 14, "",
            "system=ask or system=if-already-allowed; every strategy needs its system level"
        ),
        ("group=ask-once,group=bypass,system=ask", 15, "group", "each of group= and system= at most once"),
        ("system=ask,System=ask", 11, "System", "each of group= and system= at most once"),
        ("level=ask,system=ask", 0, "level", "group or system before ="),
        ("=ask", 0, "=", "group or system before ="),
        ("group=ask-once,,system=ask", 15, ",", "group=… or system=…"),
        ("system=ask,", 11, "", "group=… or system=…"),
        (
            "schedule-if-system-allowed,group=ask-once", 0, "schedule-if-system-allowed",
            "group=… or system=…; a shortcut such as schedule-if-system-allowed stands alone"
        ),
        ("group=if-allowed:,system=ask", 17, ",", otherGroupWords),
        ("group=if-allowed:daily quote,system=ask", 17, "daily quote", otherGroupWords),
    ]

    @Test(arguments: errors)
    func badTextNamesTheTokenAndWhatWasAllowed(_ text: String, _ offset: Int, _ token: String, _ expected: String) {
        #expect(
            throws: RuleSyntaxError(
                grammar: "permission strategy", input: text, offset: offset, token: token, expected: expected)
        ) { try PermissionStrategy(parsing: text) }
    }

    @Test func theErrorReadsAsOneLine() throws {
        let error = try #require(throws: RuleSyntaxError.self) {
            try PermissionStrategy(parsing: "group=ask-twice,system=ask")
        }
        #expect(
            error.description
                == "invalid permission strategy at position 7 (\"ask-twice\"): expected a group strategy: bypass,"
                + " allow-automatically, ask-once, ask-always-if-not-allowed, if-already-allowed or"
                + " if-allowed:OTHER-GROUP")
    }

    @Test(arguments: [
        (GroupPermissionStrategy.bypass, "bypass"),
        (.allowAutomatically, "allow-automatically"),
        (.askPermission(.once, prompt), "ask-once"),
        (.askPermission(.alwaysIfNotAllowed, prompt), "ask-always-if-not-allowed"),
        (.ifAlreadyAllowed, "if-already-allowed"),
        (.ifAllowed(otherGroup: "daily-quote"), "if-allowed:daily-quote"),
    ])
    func theGroupLevelAloneIsWrittenAsInTheGroupPair(_ group: GroupPermissionStrategy, _ text: String) {
        #expect(group.text == text)
    }
}
