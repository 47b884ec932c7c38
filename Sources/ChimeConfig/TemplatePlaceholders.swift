/// The placeholders a template may use, checked when a group file is loaded so that a misspelt one is
/// reported at its line instead of being shown as written.
///
/// ChimeCore fills templates when an entry fires; this list must match the names it fills. (When
/// ChimeCore offers a validation of its own, this check should call it instead.)
enum TemplatePlaceholders {
    static let names = ["date", "time", "weekday", "day", "month", "year", "n"]

    /// The list as a message gives it: `{date}, {time}, …`.
    static var written: String { names.map { "{\($0)}" }.joined(separator: ", ") }

    /// The first `{name}` in `text` whose name is not a placeholder. Braces around anything that is not a
    /// single word (`{ }`, `{a b}`) are plain text and not checked.
    static func firstUnknown(in text: String) -> String? {
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            let after = rest[rest.index(after: open)...]
            let word = after.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
            if !word.isEmpty, after.dropFirst(word.count).first == "}", !names.contains(String(word)) {
                return "{\(word)}"
            }
            rest = after
        }
        return nil
    }
}
