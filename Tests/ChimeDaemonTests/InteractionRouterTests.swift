import ChimeCore
import ChimeStore
import DBusKit
import Foundation
import Testing

@testable import ChimeDaemon

/// The interaction router, driven as chimed drives it: events in, actions out, on a manual clock.
@Suite struct InteractionRouterTests {
    typealias Router = InteractionRouter
    typealias Action = InteractionRouter.Action

    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let app = "org.example.App"

    static let reminder = ActionCategory(
        id: "reminder",
        actions: [
            CategoryAction(id: "open", title: "Open", options: [.foreground]),
            CategoryAction(id: "answer", title: "Answer", options: [.textInput]),
            CategoryAction(id: "pay", title: "Pay", options: [.authenticationRequired]),
            CategoryAction(id: "unlock-door", title: "Unlock", options: [.authenticationRequired, .foreground]),
            CategoryAction(id: "snooze:10m", title: "Later"),
            CategoryAction(id: "backup", title: "Back up", command: ["/usr/bin/backup", "--now"]),
        ], defaultAction: "open")

    /// Plain: no default action, no text input.
    static let plain = ActionCategory(id: "plain", actions: [CategoryAction(id: "ok", title: "OK")])

    static func shown(_ id: UInt32, owner: String = app, category: String? = "reminder") -> ShownNotification {
        ShownNotification(
            notificationID: id, itemID: UInt64(id) * 10, owner: owner, category: category, occurrence: t0)
    }

    /// A router with chimed's side of it: the shown notifications, the categories, the clock, and the
    /// actions that feed events back (handled at once, one at a time, as chimed does).
    struct Harness {
        var router = Router()
        var lookup = Router.Lookup(
            categories: [app: [reminder, plain], "": [reminder]], groupFileCategories: ["home.toml": [reminder]])
        var now = t0

        mutating func show(_ notification: ShownNotification) {
            lookup.shown[notification.notificationID] = notification
        }

        mutating func signal(_ signal: Router.Signal) -> [Action] {
            run(router.signal(signal, lookup: lookup, now: now))
        }

        mutating func action(_ id: UInt32, _ key: String) -> [Action] {
            signal(.actionInvoked(id, key: key))
        }

        mutating func answerHandled() -> [Action] { run(router.answerHandled()) }

        mutating func sessionLockChanged(locked: Bool) -> [Action] {
            run(router.sessionLockChanged(locked: locked))
        }

        /// What chimed would do: feed back `handleAgain` and `chooseAgain`, and forget a closed popup.
        mutating func run(_ actions: [Action]) -> [Action] {
            var done: [Action] = []
            for action in actions {
                switch action {
                case .handleAgain(let signal):
                    done += self.signal(signal)
                case .chooseAgain(let choice):
                    done += run(router.choose(choice, lookup: lookup, now: now))
                case .popupClosed(let shown, _):
                    lookup.shown[shown.notificationID] = nil
                    done.append(action)
                default:
                    done.append(action)
                }
            }
            return done
        }
    }

    /// The actions that are not log lines.
    static func effects(_ actions: [Action]) -> [Action] {
        actions.filter {
            if case .log = $0 { return false }
            return true
        }
    }

    static func chosen(_ key: String, _ id: UInt32) -> Action {
        .log(.info, "action \(key) chosen on notification \(id)", item: UInt64(id) * 10)
    }

    static func forward(
        _ key: String, _ id: UInt32, extra: [String: String] = [:], foreground: Bool = false, owner: String = app
    ) -> Action {
        .forward(key: key, shown(id, owner: owner), extra: extra, foreground: foreground)
    }

    // MARK: - The signals

    static let signalCases: [(String, [DBusValue], Router.Signal?)] = [
        ("ActionInvoked", [.uint32(7), .string("open")], .actionInvoked(7, key: "open")),
        ("ActivationToken", [.uint32(7), .string("xdg-1")], .activationToken(7, token: "xdg-1")),
        ("NotificationReplied", [.uint32(7), .string("on my way")], .replied(7, text: "on my way")),
        ("NotificationClosed", [.uint32(7), .uint32(2)], .closed(7, reason: 2)),
        ("NotificationClosed", [.uint32(7), .string("2")], nil),
        ("ActionInvoked", [.string("7"), .string("open")], nil),
        ("ActionInvoked", [.uint32(7)], nil),
        ("ActionInvoked", [.uint32(7), .string("open"), .string("more")], nil),
        ("SomethingElse", [.uint32(7), .string("open")], nil),
    ]

    @Test(arguments: signalCases)
    func readsTheServersSignals(member: String, body: [DBusValue], expected: Router.Signal?) {
        #expect(Router.Signal(member: member, body: body) == expected)
    }

    // MARK: - Early signals

    @Test func aSignalForAnUnknownIDWaitsWhileAnAnswerIsDueAndIsHandledAfterIt() {
        var h = Harness()
        h.router.notifySent()
        #expect(h.action(7, "open").isEmpty)
        #expect(h.router.earlySignals == [.actionInvoked(7, key: "open")])
        // The Notify answer: notification 7 is chimed's.
        h.show(Self.shown(7))
        #expect(h.answerHandled() == [Self.chosen("open", 7), Self.forward("open", 7, foreground: true)])
        #expect(h.router.earlySignals.isEmpty && h.router.answersDue == 0)
    }

    /// Two answers due: the one handled first is not notification 7's, so its signals wait again, in
    /// order, for the next.
    @Test func earlySignalsAboutAnIDStillUnknownWaitForTheNextAnswerAndComeInTheOrderTheyArrived() {
        var h = Harness()
        h.router.notifySent()
        h.router.notifySent()
        _ = h.action(7, "open")
        _ = h.signal(.closed(7, reason: 2))
        #expect(h.answerHandled().isEmpty)
        #expect(h.router.earlySignals == [.actionInvoked(7, key: "open"), .closed(7, reason: 2)])
        h.show(Self.shown(7))
        #expect(
            h.answerHandled() == [
                Self.chosen("open", 7), Self.forward("open", 7, foreground: true),
                .popupClosed(Self.shown(7), reason: 2),
            ])
    }

    /// Several apps' Notifies in flight: a signal goes as soon as the answer naming its id is handled, not
    /// when no answer is due any more.
    @Test func anEarlySignalGoesWithTheAnswerThatNamesItsIDWhileOthersAreDue() {
        var h = Harness()
        h.router.notifySent()
        h.router.notifySent()
        _ = h.action(7, "open")
        h.show(Self.shown(7))
        #expect(h.answerHandled() == [Self.chosen("open", 7), Self.forward("open", 7, foreground: true)])
        #expect(h.router.earlySignals.isEmpty && h.router.answersDue == 1)
    }

    @Test func earlySignalsAreFedBackOneAtATimeSoEachSeesWhatTheOneBeforeDid() {
        var h = Harness()
        h.router.notifySent()
        _ = h.signal(.closed(7, reason: 2))
        _ = h.action(7, "open")
        h.show(Self.shown(7))
        let raw = h.router.answerHandled()
        #expect(raw == [.handleAgain(.closed(7, reason: 2)), .handleAgain(.actionInvoked(7, key: "open"))])
        // Once the close is handled, chimed forgets the popup: the action then finds nothing.
        #expect(
            h.run(raw) == [
                .popupClosed(Self.shown(7), reason: 2),
                .log(.debug, "action open on notification 7, which chimed did not show"),
            ])
    }

    @Test func anEarlySignalThatIsStillUnknownAfterTheAnswerIsDropped() {
        var h = Harness()
        h.router.notifySent()
        _ = h.action(9, "open")
        #expect(h.answerHandled() == [.log(.debug, "action open on notification 9, which chimed did not show")])
    }

    @Test func anActivationTokenNeverWaits() {
        var h = Harness()
        h.router.notifySent()
        #expect(h.signal(.activationToken(7, token: "xdg-1")).isEmpty)
        #expect(h.router.earlySignals.isEmpty)
        h.show(Self.shown(7))
        #expect(h.answerHandled().isEmpty)
        #expect(
            Self.effects(h.action(7, "open")) == [
                Self.forward("open", 7, extra: ["activation-token": "xdg-1"], foreground: true)
            ])
    }

    @Test func atMostTheLimitOfEarlySignalsWaitAndTheFirstAreKept() {
        var h = Harness()
        h.router.notifySent()
        for n in 0...Router.earlySignalLimit {
            _ = h.action(UInt32(1000 + n), "open")
        }
        #expect(h.router.earlySignals.count == Router.earlySignalLimit)
        let replayed = h.router.answerHandled()
        #expect(replayed.count == Router.earlySignalLimit)
        #expect(replayed.first == .handleAgain(.actionInvoked(1000, key: "open")))
        #expect(replayed.last == .handleAgain(.actionInvoked(UInt32(1000 + Router.earlySignalLimit - 1), key: "open")))
    }

    @Test func signalsAboutKnownNotificationsAndOpenQuestionsDoNotWait() {
        var h = Harness()
        h.show(Self.shown(7))
        _ = h.router.questionAsked(8)
        h.router.notifySent()
        h.router.notifySent()
        #expect(Self.effects(h.action(7, "open")) == [Self.forward("open", 7, foreground: true)])
        #expect(h.action(8, "allow") == [.answerQuestion(8, true)])
        #expect(h.router.earlySignals.isEmpty)
    }

    @Test func withNoAnswerDueASignalForAnUnknownIDIsIgnoredAtOnce() {
        var h = Harness()
        #expect(h.action(9, "open") == [.log(.debug, "action open on notification 9, which chimed did not show")])
        #expect(h.signal(.closed(9, reason: 2)).isEmpty)
        #expect(h.signal(.replied(9, text: "hi")).count == 1)
        #expect(h.router.earlySignals.isEmpty)
    }

    // MARK: - Questions

    static let answers: [(String, Bool?)] = [("allow", true), ("deny", false), ("default", nil), ("later", nil)]

    @Test(arguments: answers)
    func aQuestionIsAnsweredByTheKeyChosenOnIt(key: String, answer: Bool?) {
        var h = Harness()
        h.router.notifySent()
        #expect(h.run(h.router.questionAsked(5)).isEmpty)
        #expect(h.action(5, key) == [.answerQuestion(5, answer)])
        // Answered once: the question is no longer open.
        #expect(h.action(5, "allow") == [.log(.debug, "action allow on notification 5, which chimed did not show")])
    }

    @Test func aQuestionClosedOrExpiredIsAnsweredWithNothing() {
        var h = Harness()
        _ = h.router.questionAsked(5)
        _ = h.router.questionAsked(6)
        #expect(h.signal(.closed(5, reason: 2)) == [.answerQuestion(5, nil)])
        #expect(h.router.questionExpired(6) == [.answerQuestion(6, nil)])
        #expect(h.router.questionExpired(5).isEmpty)
        #expect(h.router.questions.isEmpty)
    }

    @Test func aQuestionAnsweredBeforeItExpiresDoesNotExpire() {
        var h = Harness()
        _ = h.router.questionAsked(5)
        _ = h.action(5, "deny")
        #expect(h.router.questionExpired(5).isEmpty)
    }

    @Test func anAnswerThatCameBeforeTheQuestionsIDIsGivenOnceTheQuestionIsAsked() {
        var h = Harness()
        h.router.notifySent()
        #expect(h.action(5, "allow").isEmpty)
        #expect(h.run(h.router.questionAsked(5)) == [.answerQuestion(5, true)])
    }

    @Test func aQuestionThatCouldNotBeAskedStillReleasesTheEarlySignals() {
        var h = Harness()
        h.router.notifySent()
        h.router.notifySent()
        _ = h.action(7, "open")
        // One Notify failed, the other was the question, which showed notification 7.
        #expect(h.answerHandled().isEmpty)
        h.show(Self.shown(7))
        #expect(Self.effects(h.run(h.router.questionAsked(5))) == [Self.forward("open", 7, foreground: true)])
    }

    // MARK: - Sharing a question

    static let consent = PermissionQuestion.system(app: app)
    static let groupQuestion = PermissionQuestion.group(
        id: "work", PermissionPrompt(title: "Work reminders?", message: "At work hours"))

    @Test(arguments: [true, false, nil] as [Bool?])
    func callsOfAnAppThatNeedTheOpenQuestionShareItsAnswer(answer: Bool?) {
        var router = Router()
        #expect(router.questionNeeded(Self.consent, app: Self.app, call: 1) == [.questionTurn(call: 1, .ask)])
        #expect(router.questionNeeded(Self.consent, app: Self.app, call: 2).isEmpty)
        #expect(router.questionNeeded(Self.consent, app: Self.app, call: 3).isEmpty)
        #expect(
            router.questionAnswered(answer, app: Self.app, call: 1) == [
                .questionTurn(call: 2, .answered(answer)), .questionTurn(call: 3, .answered(answer)),
            ])
        #expect(router.appsAsked == 0)
    }

    @Test func aCallThatNeedsAnotherQuestionWaitsForTheOpenOneThenLooksAgain() {
        var router = Router()
        _ = router.questionNeeded(Self.consent, app: Self.app, call: 1)
        #expect(router.questionNeeded(Self.groupQuestion, app: Self.app, call: 2).isEmpty)
        #expect(router.questionAnswered(true, app: Self.app, call: 1) == [.questionTurn(call: 2, .askAgain)])
        // Looking again, it asks its own question.
        #expect(router.questionNeeded(Self.groupQuestion, app: Self.app, call: 2) == [.questionTurn(call: 2, .ask)])
    }

    @Test func otherAppsNeverWaitForAnAppsQuestion() {
        var router = Router()
        _ = router.questionNeeded(Self.consent, app: Self.app, call: 1)
        #expect(
            router.questionNeeded(.system(app: "org.example.Other"), app: "org.example.Other", call: 2) == [
                .questionTurn(call: 2, .ask)
            ])
        #expect(router.appsAsked == 2)
        #expect(router.questionAnswered(false, app: "org.example.Other", call: 2).isEmpty)
        #expect(router.appsAsked == 1)
    }

    @Test func onceAnsweredTheNextCallAsksAgain() {
        var router = Router()
        _ = router.questionNeeded(Self.consent, app: Self.app, call: 1)
        _ = router.questionAnswered(nil, app: Self.app, call: 1)
        #expect(router.questionNeeded(Self.consent, app: Self.app, call: 2) == [.questionTurn(call: 2, .ask)])
    }

    @Test func anAnswerFromACallThatDidNotAskChangesNothing() {
        var router = Router()
        _ = router.questionNeeded(Self.consent, app: Self.app, call: 1)
        _ = router.questionNeeded(Self.consent, app: Self.app, call: 2)
        #expect(router.questionAnswered(true, app: Self.app, call: 2).isEmpty)
        #expect(router.questionAnswered(false, app: Self.app, call: 1) == [.questionTurn(call: 2, .answered(false))])
    }

    // MARK: - Keys

    static let keyCases: [(category: String?, key: String, expected: Action)] = [
        // The click itself: the category's default action, else "default" for the app.
        ("reminder", "default", forward("open", 7, foreground: true)),
        ("plain", "default", forward("default", 7)),
        (nil, "default", forward("default", 7)),
        // Built-in verbs, carried out by chimed.
        ("reminder", "snooze:10m", .carryOut(.snooze(600), key: "snooze:10m", shown(7))),
        ("plain", "stop-repeat", .carryOut(.stopRepeat, key: "stop-repeat", shown(7, category: "plain"))),
        (nil, "skip-next", .carryOut(.skipNext, key: "skip-next", shown(7, category: nil))),
        (nil, "dismiss", .carryOut(.dismiss, key: "dismiss", shown(7, category: nil))),
        (nil, "snooze", .carryOut(.snooze(BuiltInVerb.defaultSnooze), key: "snooze", shown(7, category: nil))),
        // An app's category never has chimed run a program.
        ("reminder", "backup", forward("backup", 7)),
        // Keys the category does not name go to the app as they are.
        ("reminder", "whatever", forward("whatever", 7)),
        ("unknown-category", "open", forward("open", 7)),
    ]

    @Test(arguments: keyCases)
    func aKeyIsMappedAndRouted(category: String?, key: String, expected: Action) {
        var h = Harness()
        let notification = Self.shown(7, category: category)
        h.show(notification)
        var want = expected
        if case .forward(let k, _, let extra, let foreground) = expected {
            want = .forward(key: k, notification, extra: extra, foreground: foreground)
        }
        #expect(Self.effects(h.action(7, key)) == [want])
    }

    @Test func aDefaultMappedToABuiltInVerbIsCarriedOutUnderTheVerbsKey() {
        var h = Harness()
        let bell = ActionCategory(id: "bell", actions: [], defaultAction: "stop-repeat")
        h.lookup.categories[Self.app] = [bell]
        h.show(Self.shown(7, category: "bell"))
        #expect(
            h.action(7, "default") == [
                Self.chosen("stop-repeat", 7),
                .carryOut(.stopRepeat, key: "stop-repeat", Self.shown(7, category: "bell")),
            ])
    }

    @Test func anInlineReplyIsTheTextInputActionWithTheTextAsReply() {
        var h = Harness()
        h.show(Self.shown(7))
        #expect(
            h.signal(.replied(7, text: "on my way")) == [
                Self.chosen("answer", 7), Self.forward("answer", 7, extra: ["reply": "on my way"]),
            ])
    }

    @Test func anInlineReplyWithoutATextInputActionKeepsItsKey() {
        var h = Harness()
        h.show(Self.shown(7, category: "plain"))
        #expect(
            Self.effects(h.signal(.replied(7, text: "ok"))) == [
                .forward(
                    key: "inline-reply", Self.shown(7, category: "plain"), extra: ["reply": "ok"], foreground: false)
            ])
    }

    @Test func aGroupFilesCommandRunsOnlyForTheUsersNotifications() {
        var h = Harness()
        h.show(Self.shown(7, owner: ""))
        #expect(
            h.action(7, "backup") == [
                Self.chosen("backup", 7),
                .runCommand(["/usr/bin/backup", "--now"], key: "backup", Self.shown(7, owner: "")),
            ])
        // The same category, no longer declared by any group file: the action goes to the user's tools.
        h.lookup.groupFileCategories = [:]
        #expect(Self.effects(h.action(7, "backup")) == [Self.forward("backup", 7, owner: "")])
    }

    @Test func anActivationTokenGoesWithTheNextActionOnItsNotificationOnly() {
        var h = Harness()
        h.show(Self.shown(7))
        h.show(Self.shown(8))
        _ = h.signal(.activationToken(7, token: "xdg-1"))
        #expect(Self.effects(h.action(8, "ok")) == [Self.forward("ok", 8)])
        #expect(
            Self.effects(h.action(7, "answer")) == [Self.forward("answer", 7, extra: ["activation-token": "xdg-1"])])
        #expect(Self.effects(h.action(7, "answer")) == [Self.forward("answer", 7)])
    }

    @Test func aLaterTokenReplacesAnEarlierOne() {
        var h = Harness()
        h.show(Self.shown(7))
        _ = h.signal(.activationToken(7, token: "old"))
        _ = h.signal(.activationToken(7, token: "new"))
        #expect(
            Self.effects(h.action(7, "default")) == [
                Self.forward("open", 7, extra: ["activation-token": "new"], foreground: true)
            ])
    }

    // MARK: - The locked session

    @Test func anActionNeedingAuthenticationWaitsWhileLockedAndRunsOnUnlockInOrder() {
        var h = Harness()
        h.show(Self.shown(7))
        h.show(Self.shown(8))
        #expect(h.sessionLockChanged(locked: true) == [.log(.info, "the session is locked")])
        #expect(
            h.action(7, "pay") == [
                .log(.info, "action pay needs the session unlocked; it waits", item: 70),
                .recordWaiting(itemID: 70, key: "pay", at: Self.t0),
            ])
        h.now = Self.t0 + 30
        // Actions that need no authentication are carried out at once, locked or not.
        #expect(Self.effects(h.action(8, "open")) == [Self.forward("open", 8, foreground: true)])
        #expect(Self.effects(h.action(8, "unlock-door")).count == 1)
        #expect(h.router.waitingForUnlock.count == 2)
        h.now = Self.t0 + 60
        #expect(
            h.sessionLockChanged(locked: false) == [
                .log(.info, "the session is unlocked"),
                Self.chosen("pay", 7), Self.forward("pay", 7),
                Self.chosen("unlock-door", 8), Self.forward("unlock-door", 8, foreground: true),
            ])
        #expect(h.router.waitingForUnlock.isEmpty)
        // Carried out once.
        #expect(h.sessionLockChanged(locked: false) == [.log(.info, "the session is unlocked")])
    }

    @Test func unlockingWithNothingWaitingOnlySaysSo() {
        var h = Harness()
        #expect(h.sessionLockChanged(locked: false) == [.log(.info, "the session is unlocked")])
        _ = h.sessionLockChanged(locked: true)
        #expect(h.sessionLockChanged(locked: false) == [.log(.info, "the session is unlocked")])
    }

    @Test func anActionNeedingAuthenticationRunsAtOnceWhileUnlocked() {
        var h = Harness()
        h.show(Self.shown(7))
        #expect(h.action(7, "pay") == [Self.chosen("pay", 7), Self.forward("pay", 7)])
    }

    @Test func aSessionReadAsLockedAtStartMakesActionsWait() {
        var h = Harness()
        h.router.sessionLockRead(locked: true)
        h.show(Self.shown(7))
        #expect(Self.effects(h.action(7, "pay")) == [.recordWaiting(itemID: 70, key: "pay", at: Self.t0)])
        #expect(Self.effects(h.sessionLockChanged(locked: false)) == [Self.forward("pay", 7)])
    }

    @Test func aWaitingInlineReplyKeepsItsTextAndAWaitingDefaultIsMappedAgainOnUnlock() {
        var h = Harness()
        let vault = ActionCategory(
            id: "vault",
            actions: [CategoryAction(id: "note", title: "Note", options: [.textInput, .authenticationRequired])],
            defaultAction: "note")
        h.lookup.categories[Self.app] = [vault]
        h.show(Self.shown(7, category: "vault"))
        _ = h.sessionLockChanged(locked: true)
        _ = h.signal(.replied(7, text: "secret"))
        _ = h.action(7, "default")
        let notification = Self.shown(7, category: "vault")
        #expect(
            Self.effects(h.sessionLockChanged(locked: false)) == [
                .forward(key: "note", notification, extra: ["reply": "secret"], foreground: false),
                .forward(key: "note", notification, extra: [:], foreground: false),
            ])
    }

    @Test func aWaitingActionWhoseNotificationWasClosedMeanwhileIsIgnoredOnUnlock() {
        var h = Harness()
        h.show(Self.shown(7))
        _ = h.sessionLockChanged(locked: true)
        _ = h.action(7, "pay")
        _ = h.signal(.closed(7, reason: 2))
        #expect(
            h.sessionLockChanged(locked: false) == [
                .log(.info, "the session is unlocked"),
                .log(.debug, "action pay on notification 7, which chimed did not show"),
            ])
    }

    // MARK: - Closing

    @Test(arguments: [UInt32(1), 2, 3, 4])
    func aPopupChimedAskedToCloseIsClosedByChimedWhateverTheServerSays(reason: UInt32) {
        var h = Harness()
        h.show(Self.shown(7))
        h.router.closeRequested(7)
        #expect(h.router.closing == [7])
        #expect(h.signal(.closed(7, reason: reason)) == [.popupClosed(Self.shown(7), reason: 3)])
        #expect(h.router.closing.isEmpty)
    }

    @Test(arguments: [UInt32(1), 2, 4])
    func aPopupClosedByTheUserOrTheServerKeepsItsReason(reason: UInt32) {
        var h = Harness()
        h.show(Self.shown(7))
        h.router.closeRequested(8)
        #expect(h.signal(.closed(7, reason: reason)) == [.popupClosed(Self.shown(7), reason: reason)])
        #expect(h.router.closing == [8])
    }

    @Test func closingANotificationChimedNoLongerKnowsIsForgottenAndIgnored() {
        var h = Harness()
        h.router.closeRequested(7)
        #expect(h.signal(.closed(7, reason: 1)).isEmpty)
        #expect(h.router.closing.isEmpty)
        // Shown again under the same id later, closed by the user: not taken for chimed's close.
        h.show(Self.shown(7))
        #expect(h.signal(.closed(7, reason: 2)) == [.popupClosed(Self.shown(7), reason: 2)])
    }

    /// Plasma: after an action, the server closes the popup itself and reports reason 3, as if by a call.
    @Test(arguments: [false, true])
    func aCloseByCallAfterAnActionIsTheUsersWhereTheServerReportsItSo(quirk: Bool) {
        var h = Harness()
        h.lookup.quirks = ServerQuirks(reportsActionCloseAsCall: quirk)
        h.show(Self.shown(7))
        _ = h.action(7, "open")
        #expect(h.router.actedOn == [7])
        #expect(h.signal(.closed(7, reason: 3)) == [.popupClosed(Self.shown(7), reason: quirk ? 2 : 3)])
        #expect(h.router.actedOn.isEmpty)
    }

    @Test func onSuchAServerACloseByCallWithNoActionOrAskedByChimedStaysAClose() {
        var h = Harness()
        h.lookup.quirks = ServerQuirks(reportsActionCloseAsCall: true)
        h.show(Self.shown(7))
        #expect(h.signal(.closed(7, reason: 3)) == [.popupClosed(Self.shown(7), reason: 3)])
        // chimed closes it after the action (a built-in verb, or a server that keeps it open): its close.
        h.show(Self.shown(8))
        _ = h.action(8, "open")
        h.router.closeRequested(8)
        #expect(h.signal(.closed(8, reason: 3)) == [.popupClosed(Self.shown(8), reason: 3)])
        #expect(h.router.actedOn.isEmpty)
        // An unknown id (Plasma reports a close of one): ignored, nothing kept.
        #expect(h.signal(.closed(99, reason: 3)).isEmpty)
    }
}
