import Foundation
import Testing

@testable import ChimeCore

@Suite struct EscalationPolicyTests {
    @Test func urgencyRisesOneLevelAStepUpToCritical() {
        #expect(Escalation.raised(.low) == .normal)
        #expect(Escalation.raised(nil) == .critical)
        #expect(Escalation.raised(.normal) == .critical)
        #expect(Escalation.raised(.critical) == .critical)
    }

    @Test(arguments: [
        (59.0, 3, "escalation interval must be from 1 minute to 1 day"),
        (86_401, 3, "escalation interval must be from 1 minute to 1 day"),
        (.nan, 3, "escalation interval must be from 1 minute to 1 day"),
        (60, 0, "escalation times must be from 1 to 10"),
        (60, 11, "escalation times must be from 1 to 10"),
    ])
    func limitsAreNamed(every: TimeInterval, times: Int, problem: String) {
        #expect(Escalation(every: every, times: times).problem == problem)
    }

    @Test func theLimitsThemselvesAreAllowed() {
        #expect(Escalation(every: 60, times: 1).problem == nil)
        #expect(Escalation(every: 86_400, times: 10).problem == nil)
    }

    @Test func anEntryWithABadEscalationIsRefusedByName() {
        let entry = TimelineEntry(
            id: "pill", trigger: .at(Date(timeIntervalSince1970: 0)),
            content: .fixed(NotificationContent(summary: "x")),
            escalation: Escalation(every: 10, times: 3))
        #expect(throws: TimelineError("entry pill: escalation interval must be from 1 minute to 1 day")) {
            try entry.validate()
        }
    }

    @Test func stepsCountUpToTheTimesAndStop() {
        let first = EscalationStep(of: 7, step: 0, escalation: Escalation(every: 300, times: 2))
        #expect(first.next?.step == 1)
        #expect(first.next?.next?.step == 2)
        #expect(first.next?.next?.next == nil)
        #expect(first.next?.of == 7)
    }

    @Test func anEntryWithoutEscalationEncodesAsBefore() {
        // Stored definitions are compared by their encoding: a new optional field must not change it.
        let entry = TimelineEntry(
            id: "a", trigger: .at(Date(timeIntervalSince1970: 0)), content: .fixed(NotificationContent(summary: "x")))
        #expect(!String(decoding: DefinitionCoding.encode(entry), as: UTF8.self).contains("escalation"))
    }

    @Test func summaryNamesTheIntervalAndTimes() {
        #expect(Escalation(every: 300, times: 1).summary == "again every 5m, at most 1 time, until acknowledged")
        #expect(Escalation(every: 5400).summary == "again every 1h30m, at most 3 times, until acknowledged")
    }
}
