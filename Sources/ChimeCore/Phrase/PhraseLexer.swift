/// One word of a phrase, with where it starts.
struct PhraseToken: Hashable, Sendable {
    /// As written.
    let text: String
    /// Lower-cased, for matching.
    let word: String
    /// 0-based character offset in the input.
    let offset: Int
}

/// Splits a phrase into words: whitespace separates words, and a comma is a word of its own.
enum PhraseLexer {
    static func tokens(_ input: String) -> [PhraseToken] {
        var tokens: [PhraseToken] = []
        var current = ""
        var start = 0
        func flush() {
            if !current.isEmpty {
                tokens.append(PhraseToken(text: current, word: current.lowercased(), offset: start))
                current = ""
            }
        }
        for (offset, character) in input.enumerated() {
            if character.isWhitespace {
                flush()
            } else if character == "," {
                flush()
                tokens.append(PhraseToken(text: ",", word: ",", offset: offset))
            } else {
                if current.isEmpty { start = offset }
                current.append(character)
            }
        }
        flush()
        return tokens
    }
}
