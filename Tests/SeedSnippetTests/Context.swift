import ChimeKit
import Foundation

// What the snippets use and the app around them would define.

enum QuoteStore {
    nonisolated(unsafe) static var enabledQuotes = [
        "Storms make oaks take deeper root.", "Well begun is half done.", "Little strokes fell great oaks.",
    ]

    static func fetchRandom(_ completion: @escaping (String) -> Void) {
        completion(enabledQuotes.randomElement() ?? "")
    }

    static func disableQuote(_ quote: String) {
        enabledQuotes.removeAll { $0 == quote }
    }
}

struct Account {
    var createdAt: Date
}

let account = Account(createdAt: Date(timeIntervalSince1970: 1_700_000_000))
let userDisabledQuote = "Well begun is half done."
