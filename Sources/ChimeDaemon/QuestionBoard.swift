import ChimeCore

/// The questions chimed has open, at most one per app.
///
/// A question waits for the user for up to a minute. While it is open, every other call of the same app
/// that needs the same question waits for that one answer instead of showing the user a second popup;
/// a call that needs another question waits until the open one is answered, then looks again (the
/// answer may have settled it). Calls of other apps, and the user's own, never wait here.
actor QuestionBoard {
    enum Outcome: Sendable {
        /// The user's answer to this very question (nil: closed, expired, or could not be shown).
        case answered(Bool?)
        /// Another question of the app was open and is answered now: evaluate again with what is known.
        case askAgain
    }

    private struct Open {
        var number: Int
        var question: PermissionQuestion
        var answer: Task<Bool?, Never>
    }

    private var open: [String: Open] = [:]
    private var asked = 0

    /// Asks `question` for `app` with `ask`, or shares the answer of the same question already open.
    func answer(
        _ question: PermissionQuestion, app: String, ask: @escaping @Sendable () async -> Bool?
    ) async -> Outcome {
        if let current = open[app] {
            let answer = await current.answer.value
            if open[app]?.number == current.number { open[app] = nil }
            return current.question == question ? .answered(answer) : .askAgain
        }
        asked += 1
        let mine = Open(number: asked, question: question, answer: Task { await ask() })
        open[app] = mine
        let answer = await mine.answer.value
        if open[app]?.number == mine.number { open[app] = nil }
        return .answered(answer)
    }

    /// How many apps have a question open.
    var count: Int { open.count }
}
