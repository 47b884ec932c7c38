import Testing

@testable import ChimeCore

/// A misspelt word is answered with the word it is probably a slip for, and where it is.
@Test(arguments: [
    ("every febuary 3", 6, "febuary", "february"),
    ("evry day at 9:00", 0, "evry", "every"),
    ("every wendesday", 6, "wendesday", "wednesday"),
    ("every tuseday at 8:00", 6, "tuseday", "tuesday"),
    ("every day at 9:00 untill 2027-01-01", 18, "untill", "until"),
    ("every mornign", 6, "mornign", "morning"),
    ("every 2 wekes", 8, "wekes", "weeks"),
])
func phraseSlipsGetADidYouMean(_ phrase: String, _ offset: Int, _ token: String, _ suggestion: String) {
    do {
        _ = try PhraseParser.parse(phrase)
        Issue.record("\(phrase) was accepted")
    } catch let error as RuleSyntaxError {
        #expect(error.offset == offset)
        #expect(error.token == token)
        #expect(error.suggestion == suggestion)
        #expect(error.description.hasSuffix("; did you mean '\(suggestion)'?"))
        #expect(error.description.contains("at position \(offset + 1)"))
    } catch {
        Issue.record("\(phrase): \(error)")
    }
}

/// No guess for a word far from every known one, for numbers, or for a known word in the wrong place.
@Test(arguments: ["every xyzzy", "every 99th of the month", "every day at at 9:00", "every quux"])
func noSuggestionWithoutAClearSlip(_ phrase: String) {
    do {
        _ = try PhraseParser.parse(phrase)
        Issue.record("\(phrase) was accepted")
    } catch let error as RuleSyntaxError {
        #expect(error.suggestion == nil, "\(phrase): \(error)")
        #expect(!error.description.contains("did you mean"))
    } catch {
        Issue.record("\(phrase): \(error)")
    }
}

@Test(arguments: [
    ("FREQ=MONTLY;BYDAY=1FR", "MONTLY", "MONTHLY"),
    ("FREQ=WEEKLY;BYDAYS=MO", "BYDAYS", "BYDAY"),
    ("FREQ=DAILY;INTERVALL=2", "INTERVALL", "INTERVAL"),
])
func rruleSlipsGetADidYouMean(_ text: String, _ token: String, _ suggestion: String) {
    do {
        _ = try RRule.parse(text)
        Issue.record("\(text) was accepted")
    } catch {
        #expect(error.token == token)
        #expect(error.suggestion == suggestion)
    }
}

@Test func editDistanceCountsASwapAsOneEdit() {
    func d(_ a: String, _ b: String) -> Int { Suggestion.editDistance(Array(a), Array(b)) }
    #expect(d("teh", "the") == 1)
    #expect(d("febuary", "february") == 1)
    #expect(d("kitten", "sitting") == 3)
    #expect(d("", "abc") == 3)
    #expect(d("same", "same") == 0)
    // Nearer in length wins a tie: `feb` and `february` are both known; `febuary` is one edit from the latter only.
    #expect(Suggestion.nearest(to: "febuary", in: ["feb", "february"]) == "february")
    #expect(Suggestion.nearest(to: "february", in: ["feb", "february"]) == nil)
    #expect(Suggestion.nearest(to: "mo", in: ["mon"]) == nil)
}

/// A hint never proposes a word that means something else: a word another app uses gets the chime
/// spelling of its meaning, and a known word with letters in front ("biweekly") is not a slip of it.
@Test(arguments: [
    ("bimonthly", "every 2 months"), ("every day biweekly", "every 2 weeks"), ("quarterly", "every 3 months"),
    ("semimonthly", "every month on the 1st and 15th"), ("nightly", "every night"),
    ("every weekday twice", nil), ("every day twice a day", nil), ("every triweekly", "every 3 weeks"),
])
func hintsKeepTheMeaning(_ phrase: String, _ suggestion: String?) {
    do {
        _ = try PhraseParser.parse(phrase)
        Issue.record("\(phrase) was accepted")
    } catch let error as RuleSyntaxError {
        #expect(error.suggestion == suggestion, "\(phrase): \(error)")
        #expect(error.suggestion != "weekly" && error.suggestion != "monthly" && error.suggestion != "time")
    } catch {
        Issue.record("\(phrase): \(error)")
    }
}

@Test func aPrefixedWordIsNoSlipOfTheWordItEndsWith() {
    #expect(Suggestion.nearest(to: "biweekly", in: ["weekly", "daily"]) == nil)
    #expect(Suggestion.nearest(to: "trimonthly", in: ["monthly"]) == nil)
    #expect(Suggestion.nearest(to: "weeklly", in: ["weekly"]) == "weekly")
    #expect(Suggestion.nearest(to: "mondy", in: ["monday"]) == "monday")
}
