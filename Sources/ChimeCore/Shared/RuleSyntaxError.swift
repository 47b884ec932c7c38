/// A rule text that could not be parsed: which token, where, and what was expected instead.
///
/// Every rule parser (RRULE, OnCalendar, phrases) throws this, so the CLI and the D-Bus API
/// report bad rules the same way.
public struct RuleSyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Which grammar was being parsed, e.g. "RRULE", "OnCalendar", "phrase".
    public var grammar: String
    /// The whole input.
    public var input: String
    /// 0-based character offset of the offending token in `input`.
    public var offset: Int
    /// The offending token as written (empty at end of input).
    public var token: String
    /// What would have been valid there, as a phrase: "a weekday such as MO or 2FR".
    public var expected: String
    /// A known word the token is probably a slip for (`febuary` → `february`), or nil.
    public var suggestion: String?

    public init(
        grammar: String, input: String, offset: Int, token: String, expected: String, suggestion: String? = nil
    ) {
        self.grammar = grammar
        self.input = input
        self.offset = offset
        self.token = token
        self.expected = expected
        self.suggestion = suggestion
    }

    /// One line: `invalid RRULE at position 12 ("XX"): expected a weekday such as MO or 2FR`, then
    /// `; did you mean 'MO'?` when the token looks like a slip for a known word.
    public var description: String {
        let what = token.isEmpty ? "end of input" : "\"\(token)\""
        let hint = suggestion.map { "; did you mean '\($0)'?" } ?? ""
        return "invalid \(grammar) at position \(offset + 1) (\(what)): expected \(expected)\(hint)"
    }
}
