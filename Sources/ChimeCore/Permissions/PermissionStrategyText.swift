/// The text form of a permission strategy, for the `chime` CLI, group files and D-Bus.
///
/// A strategy is written as a shortcut or as pairs:
///
/// - `ask-system-permission-if-needed`: `PermissionStrategy.askSystemPermissionIfNeeded`
/// - `schedule-if-system-allowed`: `PermissionStrategy.scheduleIfSystemAllowed`
/// - `group=G,system=S`, the pairs in either order; `system=` is required, `group=` may be left out
///   and is then `bypass`. `G` is one of `bypass`, `allow-automatically`, `ask-once`,
///   `ask-always-if-not-allowed`, `if-already-allowed` and `if-allowed:OTHER-GROUP`; `S` is `ask` or
///   `if-already-allowed`.
///
/// Words may be in any case and spaces may stand around `,` and `=`; the other group's id is kept as
/// written. The prompt of `ask-…` is not part of the text (it has texts of its own, set beside the
/// strategy), so parsing takes it as an argument.
extension PermissionStrategy: CustomStringConvertible {
    /// The canonical text: a shortcut when the group level is `bypass`, otherwise `group=G,system=S`.
    /// Parsing it, with the same prompt, gives back this strategy.
    public var text: String {
        if group == .bypass {
            switch system {
            case .askPermission: return Self.askSystemPermissionIfNeededName
            case .ifAlreadyAllowed: return Self.scheduleIfSystemAllowedName
            }
        }
        return "group=\(group.text),system=\(system.rawValue)"
    }

    /// The canonical text.
    public var description: String { text }

    /// Parses the text form; `prompt` becomes the prompt of an `ask-once` or `ask-always-if-not-allowed`
    /// group level and is otherwise unused.
    ///
    /// - Throws: `RuleSyntaxError` naming the token and what was allowed there, e.g.
    ///   `invalid permission strategy at position 7 ("ask-twice"): expected a group strategy: …`.
    public init(parsing text: String, prompt: PermissionPrompt = PermissionPrompt()) throws(RuleSyntaxError) {
        let characters = Array(text)
        let whole = Self.trimmed(characters, 0..<characters.count)
        if whole.text.isEmpty {
            throw Self.syntaxError(text, characters, at: whole, expected: Self.expectedStrategy)
        }
        switch whole.text.lowercased() {
        case Self.askSystemPermissionIfNeededName:
            self = .askSystemPermissionIfNeeded
            return
        case Self.scheduleIfSystemAllowedName:
            self = .scheduleIfSystemAllowed
            return
        default:
            break
        }

        var group: GroupPermissionStrategy?
        var system: SystemPermissionStrategy?
        let pieces = Self.pieces(characters)
        for piece in pieces {
            let pair = Self.trimmed(characters, piece)
            guard let equals = characters[piece].firstIndex(of: "=") else {
                let expected: String
                if pieces.count == 1 {
                    expected = Self.expectedStrategy
                } else if Self.shortcutNames.contains(pair.text.lowercased()) {
                    expected = "group=… or system=…; a shortcut such as \(pair.text) stands alone"
                } else {
                    expected = "group=… or system=…"
                }
                throw Self.syntaxError(text, characters, at: pair, expected: expected)
            }
            let key = Self.trimmed(characters, piece.lowerBound..<equals)
            let value = Self.trimmed(characters, (equals + 1)..<piece.upperBound)
            switch key.text.lowercased() {
            case "group":
                guard group == nil else {
                    throw Self.syntaxError(text, characters, at: key, expected: Self.expectedEachKeyOnce)
                }
                group = try Self.groupStrategy(value, prompt: prompt, text: text, characters: characters)
            case "system":
                guard system == nil else {
                    throw Self.syntaxError(text, characters, at: key, expected: Self.expectedEachKeyOnce)
                }
                guard let parsed = SystemPermissionStrategy(rawValue: value.text.lowercased()) else {
                    throw Self.syntaxError(text, characters, at: value, expected: Self.expectedSystem)
                }
                system = parsed
            default:
                throw Self.syntaxError(text, characters, at: key, expected: "group or system before =")
            }
        }
        guard let system else {
            throw Self.syntaxError(
                text, characters, at: Word(text: "", offset: characters.count),
                expected: "system=ask or system=if-already-allowed; every strategy needs its system level")
        }
        self.init(group: group ?? .bypass, system: system)
    }

    static let askSystemPermissionIfNeededName = "ask-system-permission-if-needed"
    static let scheduleIfSystemAllowedName = "schedule-if-system-allowed"
    static let shortcutNames: Set = [askSystemPermissionIfNeededName, scheduleIfSystemAllowedName]
    static let ifAllowedPrefix = "if-allowed:"

    static let expectedStrategy =
        "ask-system-permission-if-needed, schedule-if-system-allowed, or pairs such as group=ask-once,system=ask"
    static let expectedGroup =
        "a group strategy: bypass, allow-automatically, ask-once, ask-always-if-not-allowed, if-already-allowed"
        + " or if-allowed:OTHER-GROUP"
    static let expectedSystem = "a system strategy: ask or if-already-allowed"
    static let expectedEachKeyOnce = "each of group= and system= at most once"

    /// A word of the text and the 0-based character offset where it starts.
    struct Word {
        var text: String
        var offset: Int
    }

    /// The ranges between commas.
    static func pieces(_ characters: [Character]) -> [Range<Int>] {
        var pieces: [Range<Int>] = []
        var start = 0
        for (index, character) in characters.enumerated() where character == "," {
            pieces.append(start..<index)
            start = index + 1
        }
        pieces.append(start..<characters.count)
        return pieces
    }

    /// The range without the spaces around it.
    static func trimmed(_ characters: [Character], _ range: Range<Int>) -> Word {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, characters[lower].isWhitespace { lower += 1 }
        while upper > lower, characters[upper - 1].isWhitespace { upper -= 1 }
        return Word(text: String(characters[lower..<upper]), offset: lower)
    }

    static func groupStrategy(
        _ value: Word, prompt: PermissionPrompt, text: String, characters: [Character]
    ) throws(RuleSyntaxError) -> GroupPermissionStrategy {
        let lowered = value.text.lowercased()
        switch lowered {
        case "bypass": return .bypass
        case "allow-automatically": return .allowAutomatically
        case "ask-once": return .askPermission(.once, prompt)
        case "ask-always-if-not-allowed": return .askPermission(.alwaysIfNotAllowed, prompt)
        case "if-already-allowed": return .ifAlreadyAllowed
        default: break
        }
        guard lowered.hasPrefix(ifAllowedPrefix) else {
            throw syntaxError(text, characters, at: value, expected: expectedGroup)
        }
        let id = Word(
            text: String(value.text.dropFirst(ifAllowedPrefix.count)), offset: value.offset + ifAllowedPrefix.count)
        do {
            try TimelineGroup.validateIdentifier(id.text, what: "group id")
        } catch {
            throw syntaxError(
                text, characters, at: id,
                expected: "a group id of letters, digits, '-', '_' and '.' after if-allowed:, such as"
                    + " if-allowed:daily-quote")
        }
        return .ifAllowed(otherGroup: id.text)
    }

    /// An error at `word`. An empty word (a missing key or value) names the character that follows it
    /// instead, so that the message points at the comma or `=` rather than saying "end of input".
    static func syntaxError(
        _ text: String, _ characters: [Character], at word: Word, expected: String
    ) -> RuleSyntaxError {
        var token = word.text
        if token.isEmpty, word.offset < characters.count {
            token = String(characters[word.offset])
        }
        return RuleSyntaxError(
            grammar: "permission strategy", input: text, offset: word.offset, token: token, expected: expected)
    }
}

extension GroupPermissionStrategy {
    /// The text form of the group level, as in `group=` of `PermissionStrategy.text`; the prompt is left
    /// out.
    public var text: String {
        switch self {
        case .bypass: "bypass"
        case .allowAutomatically: "allow-automatically"
        case .askPermission(let mode, _): "ask-\(mode.rawValue)"
        case .ifAlreadyAllowed: "if-already-allowed"
        case .ifAllowed(let otherGroup): PermissionStrategy.ifAllowedPrefix + otherGroup
        }
    }
}
