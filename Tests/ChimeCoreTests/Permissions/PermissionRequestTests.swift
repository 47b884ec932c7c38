import Testing

@testable import ChimeCore

/// One evaluation: a strategy, what is stored, the answers the user gives, and every step expected.
struct EvaluationCase: CustomTestStringConvertible, Sendable {
    var name: String
    var strategy: PermissionStrategy
    var group: String? = EvaluationCase.quotes
    var facts: PermissionFacts
    var answers: [Bool?] = []
    var steps: [PermissionStep]

    var testDescription: String { name }

    static let app = "org.example.Quotes"
    static let quotes = "quotes"
    static let tips = "tips"
    static let prompt = PermissionPrompt(
        title: "A quote every morning?", message: "One short quote at 9:00.", allowLabel: "Yes", denyLabel: "No")

    static let askOnce = PermissionStrategy(group: .askPermission(.once, prompt), system: .askPermission)
    static let askAlways = PermissionStrategy(
        group: .askPermission(.alwaysIfNotAllowed, prompt), system: .askPermission)

    static func facts(
        quotes: GroupAuthorization? = nil, tips: GroupAuthorization? = nil, app: AppConsent, server: Bool = true
    ) -> PermissionFacts {
        var stored: [String: GroupAuthorization] = [:]
        stored[Self.quotes] = quotes
        stored[Self.tips] = tips
        return PermissionFacts(groupAuthorizations: stored, appConsent: app, serverPresent: server)
    }

    static let askGroup = PermissionStep(question: .group(id: quotes, prompt))
    static let askSystem = PermissionStep(question: .system(app: app))
    static let allowGroup = PermissionChange.group(id: quotes, .allowed)
    static let denyGroup = PermissionChange.group(id: quotes, .denied)
    static let allowApp = PermissionChange.app(app, .allowed)
    static let denyApp = PermissionChange.app(app, .denied)

    static func done(_ outcome: PermissionOutcome, _ changes: PermissionChange...) -> PermissionStep {
        PermissionStep(changes: changes, outcome: outcome)
    }
}

extension EvaluationCase {
    static let groupLevel: [EvaluationCase] = [
        // bypass
        .init(
            name: "bypass leaves a denied group as it is and goes on to the system level",
            strategy: .askSystemPermissionIfNeeded, facts: facts(quotes: .denied, app: .allowed),
            steps: [done(.allowed)]),
        .init(
            name: "bypass with nothing stored for the group goes on to the system level",
            strategy: PermissionStrategy(group: .bypass, system: .askPermission), facts: facts(app: .allowed),
            steps: [done(.allowed)]),

        // Outside a group every group strategy is bypass.
        .init(
            name: "outside a group ask-once asks nothing", strategy: askOnce, group: nil,
            facts: facts(quotes: .denied, app: .allowed), steps: [done(.allowed)]),
        .init(
            name: "outside a group allow-automatically stores nothing",
            strategy: PermissionStrategy(group: .allowAutomatically, system: .askPermission), group: nil,
            facts: facts(app: .allowed), steps: [done(.allowed)]),
        .init(
            name: "outside a group if-already-allowed passes",
            strategy: PermissionStrategy(group: .ifAlreadyAllowed, system: .askPermission), group: nil,
            facts: facts(app: .allowed), steps: [done(.allowed)]),
        .init(
            name: "outside a group if-allowed passes though the other group is denied",
            strategy: PermissionStrategy(group: .ifAllowed(otherGroup: tips), system: .askPermission), group: nil,
            facts: facts(tips: .denied, app: .allowed), steps: [done(.allowed)]),
        .init(
            name: "outside a group the system level still asks", strategy: askOnce, group: nil,
            facts: facts(app: .undetermined), answers: [true], steps: [askSystem, done(.allowed, allowApp)]),

        // allowAutomatically
        .init(
            name: "allow-automatically stores a group not asked as allowed",
            strategy: PermissionStrategy(group: .allowAutomatically, system: .askPermission),
            facts: facts(app: .allowed), steps: [done(.allowed, allowGroup)]),
        .init(
            name: "allow-automatically overwrites a denial",
            strategy: PermissionStrategy(group: .allowAutomatically, system: .askPermission),
            facts: facts(quotes: .denied, app: .allowed), steps: [done(.allowed, allowGroup)]),
        .init(
            name: "allow-automatically changes nothing for an allowed group",
            strategy: PermissionStrategy(group: .allowAutomatically, system: .askPermission),
            facts: facts(quotes: .allowed, app: .allowed), steps: [done(.allowed)]),
        .init(
            name: "allow-automatically stores the group even when the system level refuses",
            strategy: PermissionStrategy(group: .allowAutomatically, system: .ifAlreadyAllowed),
            facts: facts(app: .denied), steps: [done(.deniedOnSystemLevel(.deniedPreviously), allowGroup)]),
        .init(
            name: "allow-automatically stores the group in the step that asks the system question",
            strategy: PermissionStrategy(group: .allowAutomatically, system: .askPermission),
            facts: facts(app: .undetermined), answers: [false],
            steps: [
                PermissionStep(changes: [allowGroup], question: .system(app: app)),
                done(.deniedOnSystemLevel(.deniedNow), denyApp),
            ]),

        // askPermission(.once)
        .init(
            name: "ask-once passes an allowed group without asking", strategy: askOnce,
            facts: facts(quotes: .allowed, app: .allowed), steps: [done(.allowed)]),
        .init(
            name: "ask-once asks a group not asked and stores an allow", strategy: askOnce,
            facts: facts(app: .allowed), answers: [true], steps: [askGroup, done(.allowed, allowGroup)]),
        .init(
            name: "ask-once asks a group not asked and stores a denial", strategy: askOnce,
            facts: facts(app: .allowed), answers: [false],
            steps: [askGroup, done(.deniedOnGroupLevel(.deniedNow), denyGroup)]),
        .init(
            name: "ask-once with the question unanswered stores nothing", strategy: askOnce,
            facts: facts(app: .allowed), answers: [nil], steps: [askGroup, done(.deniedOnGroupLevel(.undetermined))]),
        .init(
            name: "ask-once does not ask a denied group again", strategy: askOnce,
            facts: facts(quotes: .denied, app: .allowed), steps: [done(.deniedOnGroupLevel(.deniedPreviously))]),
        .init(
            name: "ask-once without a server cannot ask a group not asked", strategy: askOnce,
            facts: facts(app: .allowed, server: false), steps: [done(.deniedOnGroupLevel(.undetermined))]),
        .init(
            name: "ask-once without a server still reports a denied group as denied before", strategy: askOnce,
            facts: facts(quotes: .denied, app: .allowed, server: false),
            steps: [done(.deniedOnGroupLevel(.deniedPreviously))]),
        .init(
            name: "ask-once without a server passes an allowed group", strategy: askOnce,
            facts: facts(quotes: .allowed, app: .allowed, server: false), steps: [done(.allowed)]),

        // askPermission(.alwaysIfNotAllowed)
        .init(
            name: "ask-always passes an allowed group without asking", strategy: askAlways,
            facts: facts(quotes: .allowed, app: .allowed), steps: [done(.allowed)]),
        .init(
            name: "ask-always asks a group not asked and stores an allow", strategy: askAlways,
            facts: facts(app: .allowed), answers: [true], steps: [askGroup, done(.allowed, allowGroup)]),
        .init(
            name: "ask-always asks a group not asked and stores a denial", strategy: askAlways,
            facts: facts(app: .allowed), answers: [false],
            steps: [askGroup, done(.deniedOnGroupLevel(.deniedNow), denyGroup)]),
        .init(
            name: "ask-always asks a denied group again and stores an allow", strategy: askAlways,
            facts: facts(quotes: .denied, app: .allowed), answers: [true],
            steps: [askGroup, done(.allowed, allowGroup)]),
        .init(
            name: "ask-always denied again reports denied now and changes nothing", strategy: askAlways,
            facts: facts(quotes: .denied, app: .allowed), answers: [false],
            steps: [askGroup, done(.deniedOnGroupLevel(.deniedNow))]),
        .init(
            name: "ask-always with the question to a denied group unanswered stores nothing", strategy: askAlways,
            facts: facts(quotes: .denied, app: .allowed), answers: [nil],
            steps: [askGroup, done(.deniedOnGroupLevel(.undetermined))]),
        .init(
            name: "ask-always without a server cannot ask a denied group again", strategy: askAlways,
            facts: facts(quotes: .denied, app: .allowed, server: false),
            steps: [done(.deniedOnGroupLevel(.undetermined))]),

        // ifAlreadyAllowed
        .init(
            name: "if-already-allowed passes an allowed group",
            strategy: PermissionStrategy(group: .ifAlreadyAllowed, system: .askPermission),
            facts: facts(quotes: .allowed, app: .allowed), steps: [done(.allowed)]),
        .init(
            name: "if-already-allowed refuses a denied group as denied before",
            strategy: PermissionStrategy(group: .ifAlreadyAllowed, system: .askPermission),
            facts: facts(quotes: .denied, app: .allowed), steps: [done(.deniedOnGroupLevel(.deniedPreviously))]),
        .init(
            name: "if-already-allowed refuses a group not asked as undetermined without asking",
            strategy: PermissionStrategy(group: .ifAlreadyAllowed, system: .askPermission),
            facts: facts(app: .allowed), steps: [done(.deniedOnGroupLevel(.undetermined))]),

        // ifAllowed(otherGroup:)
        .init(
            name: "if-allowed passes when the other group is allowed, whatever its own",
            strategy: PermissionStrategy(group: .ifAllowed(otherGroup: tips), system: .askPermission),
            facts: facts(quotes: .denied, tips: .allowed, app: .allowed), steps: [done(.allowed)]),
        .init(
            name: "if-allowed refuses as denied before when the other group is denied",
            strategy: PermissionStrategy(group: .ifAllowed(otherGroup: tips), system: .askPermission),
            facts: facts(quotes: .allowed, tips: .denied, app: .allowed),
            steps: [done(.deniedOnGroupLevel(.deniedPreviously))]),
        .init(
            name: "if-allowed refuses as undetermined when the other group is not asked",
            strategy: PermissionStrategy(group: .ifAllowed(otherGroup: tips), system: .askPermission),
            facts: facts(quotes: .allowed, app: .allowed), steps: [done(.deniedOnGroupLevel(.undetermined))]),
        .init(
            name: "if-allowed goes on to ask the system question",
            strategy: PermissionStrategy(group: .ifAllowed(otherGroup: tips), system: .askPermission),
            facts: facts(tips: .allowed, app: .undetermined), answers: [true],
            steps: [askSystem, done(.allowed, allowApp)]),
    ]

    static let bothLevels: [EvaluationCase] = [
        .init(
            name: "both questions allowed store the group, then the app", strategy: askOnce,
            facts: facts(app: .undetermined), answers: [true, true],
            steps: [
                askGroup, PermissionStep(changes: [allowGroup], question: .system(app: app)),
                done(.allowed, allowApp),
            ]),
        .init(
            name: "the group allowed and the app denied store both", strategy: askOnce,
            facts: facts(app: .undetermined), answers: [true, false],
            steps: [
                askGroup, PermissionStep(changes: [allowGroup], question: .system(app: app)),
                done(.deniedOnSystemLevel(.deniedNow), denyApp),
            ]),
        .init(
            name: "the group allowed and the system question unanswered store the group only", strategy: askOnce,
            facts: facts(app: .undetermined), answers: [true, nil],
            steps: [
                askGroup, PermissionStep(changes: [allowGroup], question: .system(app: app)),
                done(.deniedOnSystemLevel(.undetermined)),
            ]),
        .init(
            name: "a group denied now never reaches the system question", strategy: askOnce,
            facts: facts(app: .undetermined), answers: [false],
            steps: [askGroup, done(.deniedOnGroupLevel(.deniedNow), denyGroup)]),
        .init(
            name: "a group allowed now meets an app denied before", strategy: askAlways,
            facts: facts(quotes: .denied, app: .denied), answers: [true],
            steps: [askGroup, done(.deniedOnSystemLevel(.deniedPreviously), allowGroup)]),
        .init(
            name: "a group refused before the system level leaves an app denied before unreported",
            strategy: PermissionStrategy(group: .ifAlreadyAllowed, system: .ifAlreadyAllowed),
            facts: facts(app: .denied), steps: [done(.deniedOnGroupLevel(.undetermined))]),
    ]

    static let systemLevel: [EvaluationCase] = [
        // askPermission, through the askSystemPermissionIfNeeded shortcut
        .init(
            name: "ask passes an app allowed before", strategy: .askSystemPermissionIfNeeded,
            facts: facts(app: .allowed), steps: [done(.allowed)]),
        .init(
            name: "ask refuses an app denied before without asking", strategy: .askSystemPermissionIfNeeded,
            facts: facts(app: .denied), steps: [done(.deniedOnSystemLevel(.deniedPreviously))]),
        .init(
            name: "ask asks an undetermined app and stores an allow", strategy: .askSystemPermissionIfNeeded,
            facts: facts(app: .undetermined), answers: [true], steps: [askSystem, done(.allowed, allowApp)]),
        .init(
            name: "ask asks an undetermined app and stores a denial", strategy: .askSystemPermissionIfNeeded,
            facts: facts(app: .undetermined), answers: [false],
            steps: [askSystem, done(.deniedOnSystemLevel(.deniedNow), denyApp)]),
        .init(
            name: "ask with the question unanswered stores nothing", strategy: .askSystemPermissionIfNeeded,
            facts: facts(app: .undetermined), answers: [nil],
            steps: [askSystem, done(.deniedOnSystemLevel(.undetermined))]),
        .init(
            name: "ask without a server cannot ask an undetermined app", strategy: .askSystemPermissionIfNeeded,
            facts: facts(app: .undetermined, server: false), steps: [done(.deniedOnSystemLevel(.undetermined))]),
        .init(
            name: "ask without a server passes an app allowed before", strategy: .askSystemPermissionIfNeeded,
            facts: facts(app: .allowed, server: false), steps: [done(.allowed)]),
        .init(
            name: "ask without a server refuses an app denied before as denied before",
            strategy: .askSystemPermissionIfNeeded, facts: facts(app: .denied, server: false),
            steps: [done(.deniedOnSystemLevel(.deniedPreviously))]),

        // ifAlreadyAllowed, through the scheduleIfSystemAllowed shortcut
        .init(
            name: "if-already-allowed passes an app allowed before", strategy: .scheduleIfSystemAllowed,
            facts: facts(app: .allowed), steps: [done(.allowed)]),
        .init(
            name: "if-already-allowed refuses an app denied before", strategy: .scheduleIfSystemAllowed,
            facts: facts(app: .denied), steps: [done(.deniedOnSystemLevel(.deniedPreviously))]),
        .init(
            name: "if-already-allowed refuses an undetermined app without asking though a server is there",
            strategy: .scheduleIfSystemAllowed, facts: facts(app: .undetermined),
            steps: [done(.deniedOnSystemLevel(.undetermined))]),
    ]

    static let all = groupLevel + bothLevels + systemLevel

    /// Starts the evaluation and gives the answers in turn; every step returned.
    func run() -> (steps: [PermissionStep], request: PermissionRequest) {
        var request = PermissionRequest(strategy: strategy, app: Self.app, group: group, facts: facts)
        var steps = [request.start()]
        for answer in answers {
            steps.append(request.answer(answer))
        }
        return (steps, request)
    }
}

@Suite struct PermissionRequestTests {
    @Test(arguments: EvaluationCase.groupLevel)
    func groupLevel(_ test: EvaluationCase) {
        #expect(test.run().steps == test.steps)
    }

    @Test(arguments: EvaluationCase.bothLevels)
    func bothLevels(_ test: EvaluationCase) {
        #expect(test.run().steps == test.steps)
    }

    @Test(arguments: EvaluationCase.systemLevel)
    func systemLevel(_ test: EvaluationCase) {
        #expect(test.run().steps == test.steps)
    }

    @Test(arguments: EvaluationCase.all)
    func everyStepButTheLastAsksAndTheLastReports(_ test: EvaluationCase) throws {
        let steps = test.run().steps
        let last = try #require(steps.last)
        for step in steps.dropLast() {
            #expect(step.question != nil && step.outcome == nil)
        }
        #expect(last.question == nil && last.outcome != nil)
    }

    @Test(arguments: EvaluationCase.all)
    func theRequestKeepsTheOutcomeAndTheFactsWithEveryChangeApplied(_ test: EvaluationCase) {
        let (steps, request) = test.run()
        var expected = test.facts
        for change in steps.flatMap(\.changes) {
            switch change {
            case .group(let id, let authorization): expected.groupAuthorizations[id] = authorization
            case .app(_, let consent): expected.appConsent = consent
            }
        }
        #expect(request.facts == expected)
        #expect(request.outcome == steps.last?.outcome)
        #expect(request.pendingQuestion == nil)
    }

    @Test func thePendingQuestionIsTheOneTheLastStepAsked() {
        var request = PermissionRequest(
            strategy: EvaluationCase.askOnce, app: EvaluationCase.app, group: EvaluationCase.quotes,
            facts: PermissionFacts())
        #expect(request.pendingQuestion == nil && request.outcome == nil)
        _ = request.start()
        #expect(request.pendingQuestion == .group(id: EvaluationCase.quotes, EvaluationCase.prompt))
        _ = request.answer(true)
        #expect(request.pendingQuestion == .system(app: EvaluationCase.app))
        #expect(request.outcome == nil)
        _ = request.answer(true)
        #expect(request.pendingQuestion == nil)
        #expect(request.outcome == .allowed)
    }

    @Test(arguments: [true, false, nil] as [Bool?])
    func anAnswerAfterTheOutcomeRepeatsItAndChangesNothing(_ late: Bool?) {
        var request = PermissionRequest(
            strategy: EvaluationCase.askOnce, app: EvaluationCase.app, group: EvaluationCase.quotes,
            facts: PermissionFacts(appConsent: .allowed))
        _ = request.start()
        #expect(
            request.answer(false)
                == PermissionStep(changes: [EvaluationCase.denyGroup], outcome: .deniedOnGroupLevel(.deniedNow)))
        #expect(request.answer(late) == PermissionStep(outcome: .deniedOnGroupLevel(.deniedNow)))
        #expect(request.facts.groupAuthorizations == [EvaluationCase.quotes: .denied])
        #expect(request.outcome == .deniedOnGroupLevel(.deniedNow))
    }

    @Test func anAnswerBeforeStartStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            var request = PermissionRequest(
                strategy: .askSystemPermissionIfNeeded, app: "org.example.Quotes", group: nil,
                facts: PermissionFacts())
            _ = request.answer(true)
        }
    }

    @Test func startingTwiceStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            var request = PermissionRequest(
                strategy: .askSystemPermissionIfNeeded, app: "org.example.Quotes", group: nil,
                facts: PermissionFacts())
            _ = request.start()
            _ = request.start()
        }
    }

    @Test func theShortcutsBypassTheGroupLevel() {
        #expect(
            PermissionStrategy.askSystemPermissionIfNeeded == PermissionStrategy(group: .bypass, system: .askPermission)
        )
        #expect(
            PermissionStrategy.scheduleIfSystemAllowed == PermissionStrategy(group: .bypass, system: .ifAlreadyAllowed))
    }

    @Test func factsTreatAGroupWithNothingStoredAsNotAsked() {
        let facts = PermissionFacts(groupAuthorizations: ["quotes": .denied])
        #expect(facts.authorization(ofGroup: "quotes") == .denied)
        #expect(facts.authorization(ofGroup: "tips") == .notAsked)
    }

    @Test(arguments: [
        (PermissionOutcome.allowed, true),
        (.deniedOnGroupLevel(.deniedNow), false),
        (.deniedOnGroupLevel(.undetermined), false),
        (.deniedOnSystemLevel(.deniedPreviously), false),
    ])
    func onlyTheAllowedOutcomeAllowsScheduling(_ outcome: PermissionOutcome, _ allowed: Bool) {
        #expect(outcome.isAllowed == allowed)
    }
}
