import Testing

@testable import ChimeCore

@Suite struct GroupAuthorizationsTests {
    static let a = "org.example.A"
    static let b = "org.example.B"

    @Test func decisionsAreKeptAndCountedPerApp() {
        var decisions = GroupAuthorizations([
            GroupKey(owner: Self.a, id: "one"): .allowed, GroupKey(owner: Self.a, id: "two"): .denied,
            GroupKey(owner: Self.b, id: "one"): .denied,
        ])
        #expect(decisions.count(app: Self.a) == 2 && decisions.count(app: Self.b) == 1)
        #expect(decisions[GroupKey(owner: Self.a, id: "one")] == .allowed)
        #expect(decisions[GroupKey(owner: Self.b, id: "one")] == .denied)
        decisions[GroupKey(owner: Self.a, id: "one")] = .denied
        #expect(decisions.count(app: Self.a) == 2)
        decisions[GroupKey(owner: Self.a, id: "one")] = nil
        decisions[GroupKey(owner: Self.a, id: "two")] = nil
        #expect(decisions.count(app: Self.a) == 0 && decisions.count(app: Self.b) == 1)
        // Forgetting what is not there changes nothing.
        decisions[GroupKey(owner: "org.example.C", id: "none")] = nil
        #expect(decisions == GroupAuthorizations([GroupKey(owner: Self.b, id: "one"): .denied]))
    }

    @Test func anEvaluationGetsTheDecisionsOfTheGroupsItReadsOnly() {
        var rows: [GroupKey: GroupAuthorization] = [GroupKey(owner: Self.b, id: "g"): .denied]
        for index in 0..<100 { rows[GroupKey(owner: Self.a, id: "g\(index)")] = .allowed }
        let decisions = GroupAuthorizations(rows)
        #expect(decisions.decisions(app: Self.a, strategy: .bypass, group: "g1") == ["g1": .allowed])
        #expect(
            decisions.decisions(app: Self.a, strategy: .ifAllowed(otherGroup: "g2"), group: "new") == ["g2": .allowed])
        #expect(decisions.decisions(app: Self.a, strategy: .allowAutomatically, group: nil).isEmpty)
        // Another app's decision of a group of the same id is not this app's.
        #expect(decisions.decisions(app: "org.example.C", strategy: .bypass, group: "g").isEmpty)
        #expect(decisions.decisions(app: Self.b, strategy: .bypass, group: "g") == ["g": .denied])
    }

    /// `mayStoreDecision` says which levels store a decision for a group that has none, as the evaluation
    /// does it, with the question answered.
    @Test(arguments: [
        GroupPermissionStrategy.bypass, .allowAutomatically, .askPermission(.once, PermissionPrompt()),
        .askPermission(.alwaysIfNotAllowed, PermissionPrompt()), .ifAlreadyAllowed, .ifAllowed(otherGroup: "x"),
    ])
    func aLevelSaysWhetherItStoresADecision(_ level: GroupPermissionStrategy) {
        for answer in [true, false] {
            var request = PermissionRequest(
                strategy: PermissionStrategy(group: level, system: .ifAlreadyAllowed), app: Self.a, group: "g",
                facts: PermissionFacts(appConsent: .allowed))
            var changes = request.start().changes
            if request.pendingQuestion != nil { changes += request.answer(answer).changes }
            let stores = changes.contains { if case .group = $0 { true } else { false } }
            #expect(stores == level.mayStoreDecision, "\(level), answered \(answer)")
        }
    }
}
