import ChimeCore
import ChimeStore
import DBusKit
import Foundation
import Logging

/// Where the notification server's signals go: to an open question, to a notification chimed showed, or
/// nowhere. A pure state machine: events in, actions out; it reads no clock (`now` is given), keeps no
/// connection and writes no store. A part of `DeliveryCore`, which routes its follow-ups and passes the
/// rest of its actions on, in order.
///
/// **State**
/// - the open questions (by notification id), whose answer is the next action chosen on them or their
///   closing;
/// - the question each app has open, at most one: the app's other calls that need the same question wait
///   for that answer instead of showing the user a second popup; a call that needs another question waits
///   until the open one is answered, then looks again (the answer may have settled it). Calls of other
///   apps never wait for it;
/// - the activation tokens the server sent just before an action, by notification id;
/// - how many Notify answers are due (`answersDue`), and the signals that arrived meanwhile about a
///   notification chimed does not know (`earlySignals`, at most `earlySignalLimit`);
/// - whether the session is locked, and the choices that wait for it to be unlocked;
/// - the popups chimed asked the server to close (`closing`).
///
/// **Events**: `signal` (ActionInvoked, ActivationToken, NotificationReplied, NotificationClosed),
/// `choose` (an action chosen on a notification), `notifySent` and `answerHandled` (a Notify call and its
/// answer), `questionNeeded` and `questionAnswered` (a call of an app needs a question, and the one that
/// asked it has the answer), `questionAsked` and `questionExpired` (the question's notification),
/// `sessionLockRead` and `sessionLockChanged`, `closeRequested`.
///
/// **Actions**: `questionTurn` (what a call that needs a question does: ask it, take the answer, or look
/// again), `answerQuestion`, `carryOut` (a built-in verb), `runCommand` (a group file's command),
/// `forward` (to the owning app), `recordWaiting`, `popupClosed`, `log`, and two that feed an event back:
/// `handleAgain` (an early signal whose notification may be known now) and `chooseAgain` (a choice that
/// waited for the unlock). They come back one at a time so that what the core decides for one (a popup it
/// closes, a notification it forgets) is known when the next is routed.
struct InteractionRouter: Sendable {
    /// One of the server's signals about a notification.
    enum Signal: Hashable, Sendable {
        case actionInvoked(UInt32, key: String)
        case activationToken(UInt32, token: String)
        /// KDE's inline reply: the text typed into a text-input action.
        case replied(UInt32, text: String)
        case closed(UInt32, reason: UInt32)

        /// The signal `member` with `body`; nil when it is none of the four or its arguments do not fit.
        init?(member: String?, body: [DBusValue]) {
            guard body.count == 2, case .uint32(let id) = body[0] else { return nil }
            switch (member, body[1]) {
            case ("ActionInvoked", .string(let key)): self = .actionInvoked(id, key: key)
            case ("ActivationToken", .string(let token)): self = .activationToken(id, token: token)
            case ("NotificationReplied", .string(let text)): self = .replied(id, text: text)
            case ("NotificationClosed", .uint32(let reason)): self = .closed(id, reason: reason)
            default: return nil
            }
        }

        var notificationID: UInt32 {
            switch self {
            case .actionInvoked(let id, _), .activationToken(let id, _), .replied(let id, _), .closed(let id, _): id
            }
        }
    }

    /// An action chosen on a notification: its key as the server reported it, and the text typed for an
    /// inline reply.
    struct Choice: Hashable, Sendable {
        var notificationID: UInt32
        var key: String
        var reply: String?
    }

    /// What chimed knows when an event comes: the notifications it showed, and the categories of actions.
    struct Lookup: Sendable {
        /// The shown notifications, by notification id.
        var shown: [UInt32: ShownNotification]
        /// The categories of actions, by owner.
        var categories: [String: [ActionCategory]]
        /// The categories each group file declared: only those may have chimed run a program.
        var groupFileCategories: [String: [ActionCategory]]
        /// What the server of the moment does differently.
        var quirks: ServerQuirks

        init(
            shown: [UInt32: ShownNotification] = [:], categories: [String: [ActionCategory]] = [:],
            groupFileCategories: [String: [ActionCategory]] = [:], quirks: ServerQuirks = ServerQuirks()
        ) {
            self.shown = shown
            self.categories = categories
            self.groupFileCategories = groupFileCategories
            self.quirks = quirks
        }

        func category(of shown: ShownNotification) -> ActionCategory? {
            shown.category.flatMap { id in categories[shown.owner]?.first { $0.id == id } }
        }

        /// Whether a group file declared `category` (for the user's notifications only).
        func isFromGroupFile(_ category: ActionCategory, owner: String) -> Bool {
            owner.isEmpty && groupFileCategories.values.contains { $0.contains(category) }
        }
    }

    /// What a call that needs a question does.
    enum QuestionTurn: Hashable, Sendable {
        /// Shows the question, then reports the answer with `questionAnswered`.
        case ask
        /// The same question was open: this is its answer (nil: closed, expired, or could not be shown).
        case answered(Bool?)
        /// Another question of the app was open and is answered now: evaluate again with what is known.
        case askAgain
    }

    enum Action: Hashable, Sendable {
        /// Call `call`, which needs a question, goes on.
        case questionTurn(call: Int, QuestionTurn)
        /// The user's answer to an open question: true for `allow`, false for `deny`, nil for anything else
        /// (another key, its closing, or no answer in time).
        case answerQuestion(UInt32, Bool?)
        /// A built-in verb chosen as `key` on `shown`.
        case carryOut(BuiltInVerb, key: String, ShownNotification)
        /// A group file's command for the action `key`.
        case runCommand([String], key: String, ShownNotification)
        /// The app's own action, with `extra` user info (`activation-token`, `reply`).
        case forward(key: String, ShownNotification, extra: [String: String], foreground: Bool)
        /// The item's history: the action `key` waits for the session to be unlocked.
        case recordWaiting(itemID: UInt64, key: String, at: Date)
        /// A shown notification was closed, for `reason` (the specification's code; 3 whenever chimed asked).
        case popupClosed(ShownNotification, reason: UInt32)
        /// An early signal to handle now, as if it just came.
        case handleAgain(Signal)
        /// A choice that waited for the unlock, to make now.
        case chooseAgain(Choice)
        case log(Logger.Level, String, item: UInt64? = nil)
    }

    /// At most this many signals wait for a Notify answer; more are dropped (they cannot be about chimed's
    /// notification, which is one at a time).
    static let earlySignalLimit = 1000

    /// The open questions, by notification id.
    private(set) var questions: Set<UInt32> = []
    /// The question each app has open: asked by one call, waited for by the others.
    private struct SharedQuestion: Sendable {
        var asker: Int
        var question: PermissionQuestion
        var waiting: [(call: Int, question: PermissionQuestion)] = []
    }
    private var sharedQuestions: [String: SharedQuestion] = [:]
    /// Activation tokens the server sent just before an action, by notification id.
    private(set) var tokens: [UInt32: String] = [:]
    /// Notify calls whose answer chimed has not acted on yet. The answer comes through the relay and a
    /// signal straight from the server, so a signal about a notification can arrive before chimed knows
    /// its id: such signals wait in `earlySignals` until no answer is due.
    private(set) var answersDue = 0
    private(set) var earlySignals: [Signal] = []
    /// Whether the user's session is locked (logind's LockedHint).
    private(set) var sessionLocked = false
    /// The choices that need authentication, made while the session was locked, in order.
    private(set) var waitingForUnlock: [Choice] = []
    /// Popups chimed asked the server to close: their NotificationClosed says so, whatever reason code the
    /// server gives.
    private(set) var closing: Set<UInt32> = []
    /// Popups chimed closed in the stead of a server that does not expire them: their closing is an expiry.
    private(set) var expiring: Set<UInt32> = []
    /// Shown notifications an action was chosen on, until they are closed: a server that reports closing
    /// them after the action as by a call (`ServerQuirks.reportsActionCloseAsCall`) means the user's doing.
    private(set) var actedOn: Set<UInt32> = []

    // MARK: - Events

    /// One of the server's signals.
    mutating func signal(_ signal: Signal, lookup: Lookup, now: Date) -> [Action] {
        let id = signal.notificationID
        if answersDue > 0, lookup.shown[id] == nil, !questions.contains(id) {
            switch signal {
            case .activationToken: break
            default:
                if earlySignals.count < Self.earlySignalLimit { earlySignals.append(signal) }
                return []
            }
        }
        switch signal {
        case .actionInvoked(_, let key):
            return choose(Choice(notificationID: id, key: key), lookup: lookup, now: now)
        case .activationToken(_, let token):
            tokens[id] = token
            return []
        case .replied(_, let text):
            return choose(Choice(notificationID: id, key: "inline-reply", reply: text), lookup: lookup, now: now)
        case .closed(_, let reason):
            if questions.remove(id) != nil { return [.answerQuestion(id, nil)] }
            if expiring.remove(id) != nil {
                closing.remove(id)
                guard let shown = lookup.shown[id] else { return [] }
                return [.popupClosed(shown, reason: 1)]
            }
            let byChimed = closing.remove(id) != nil
            let acted = actedOn.remove(id) != nil
            guard let shown = lookup.shown[id] else { return [] }
            // Closed because chimed asked, whatever code the server reports (some say "expired").
            if byChimed { return [.popupClosed(shown, reason: 3)] }
            // Closed by the server once the user chose an action: the user's doing, whatever it says.
            if acted, reason == 3, lookup.quirks.reportsActionCloseAsCall { return [.popupClosed(shown, reason: 2)] }
            return [.popupClosed(shown, reason: reason)]
        }
    }

    /// An action chosen on a notification.
    mutating func choose(_ choice: Choice, lookup: Lookup, now: Date) -> [Action] {
        let id = choice.notificationID
        let key = choice.key
        if questions.remove(id) != nil {
            return [.answerQuestion(id, key == "allow" ? true : key == "deny" ? false : nil)]
        }
        guard let shown = lookup.shown[id] else {
            return [.log(.debug, "action \(key) on notification \(id), which chimed did not show")]
        }
        actedOn.insert(id)
        let token = tokens.removeValue(forKey: id)
        let category = lookup.category(of: shown)
        var chosen = key
        if key == "default", let mapped = category?.defaultAction { chosen = mapped }
        if key == "inline-reply", let textInput = category?.actions.first(where: { $0.options.contains(.textInput) }) {
            chosen = textInput.id
        }
        // An action shown as its icon comes back by the icon's name (an action's own id comes first).
        if let category, !category.actions.contains(where: { $0.id == chosen }),
            let iconed = category.actions.first(where: { $0.icon == key })
        {
            chosen = iconed.id
        }
        let definition = category?.actions.first { $0.id == chosen }
        if definition?.options.contains(.authenticationRequired) == true, sessionLocked {
            waitingForUnlock.append(choice)
            return [
                .log(.info, "action \(chosen) needs the session unlocked; it waits", item: shown.itemID),
                .recordWaiting(itemID: shown.itemID, key: chosen, at: now),
            ]
        }
        var actions: [Action] = [.log(.info, "action \(chosen) chosen on notification \(id)", item: shown.itemID)]
        if let verb = BuiltInVerb(key: chosen) {
            actions.append(.carryOut(verb, key: chosen, shown))
        } else if let command = definition?.command, let category,
            lookup.isFromGroupFile(category, owner: shown.owner)
        {
            actions.append(.runCommand(command, key: chosen, shown))
        } else {
            var extra: [String: String] = [:]
            if let token { extra["activation-token"] = token }
            if let reply = choice.reply { extra["reply"] = reply }
            actions.append(
                .forward(
                    key: chosen, shown, extra: extra, foreground: definition?.options.contains(.foreground) ?? false))
        }
        return actions
    }

    /// A Notify call was made: its answer is due.
    mutating func notifySent() {
        answersDue += 1
    }

    /// A Notify answer was acted on (its id is known, or the call failed): the signals that arrived early
    /// are handled again, in the order they came. Those about an id now known go on; while other answers
    /// are due, those about an id still unknown wait again (several apps' Notifies may be in flight, so
    /// waiting for none to be due could hold them for as long as the apps keep sending).
    mutating func answerHandled() -> [Action] {
        answersDue -= 1
        guard !earlySignals.isEmpty else { return [] }
        let early = earlySignals
        earlySignals = []
        return early.map { .handleAgain($0) }
    }

    /// Call `call` of `app` needs `question` answered: it asks it, unless the app has a question open.
    mutating func questionNeeded(_ question: PermissionQuestion, app: String, call: Int) -> [Action] {
        if sharedQuestions[app] != nil {
            sharedQuestions[app]?.waiting.append((call, question))
            return []
        }
        sharedQuestions[app] = SharedQuestion(asker: call, question: question)
        return [.questionTurn(call: call, .ask)]
    }

    /// Call `call`, which asked `app`'s open question, has its answer: the calls that waited go on, those
    /// that needed the same question with its answer, the others to look again.
    mutating func questionAnswered(_ answer: Bool?, app: String, call: Int) -> [Action] {
        guard let open = sharedQuestions[app], open.asker == call else { return [] }
        sharedQuestions[app] = nil
        return open.waiting.map { waiting in
            .questionTurn(call: waiting.call, waiting.question == open.question ? .answered(answer) : .askAgain)
        }
    }

    /// How many apps have a question open.
    var appsAsked: Int { sharedQuestions.count }

    /// A question was shown as notification `id`: that Notify answer is handled.
    mutating func questionAsked(_ id: UInt32) -> [Action] {
        questions.insert(id)
        return answerHandled()
    }

    /// Question `id` had no answer in time.
    mutating func questionExpired(_ id: UInt32) -> [Action] {
        questions.remove(id) == nil ? [] : [.answerQuestion(id, nil)]
    }

    /// Whether the session is locked, as first read: nothing waits yet.
    mutating func sessionLockRead(locked: Bool) {
        sessionLocked = locked
    }

    /// logind's LockedHint changed: on unlock, the choices that waited for it are made again, in order.
    mutating func sessionLockChanged(locked: Bool) -> [Action] {
        sessionLocked = locked
        var actions: [Action] = [.log(.info, "the session is \(locked ? "locked" : "unlocked")")]
        guard !locked else { return actions }
        actions += waitingForUnlock.map { .chooseAgain($0) }
        waitingForUnlock = []
        return actions
    }

    /// chimed asks the server to close popup `id`.
    mutating func closeRequested(_ id: UInt32) {
        closing.insert(id)
    }

    /// chimed asks the server to close popup `id` because its expiry time passed (the server ignores it):
    /// its NotificationClosed is reported as an expiry (reason 1).
    mutating func expiryRequested(_ id: UInt32) {
        expiring.insert(id)
    }
}
