import Foundation
import Testing

@testable import ChimeCore

@Suite struct PermissionValuesTests {
    @Test(arguments: [
        (GroupAuthorization.allowed, AuthorizationStatus.allowed),
        (.denied, .deniedPreviously),
        (.notAsked, .undetermined),
    ])
    func aStoredGroupDecisionIsReportedAsItsStatus(_ stored: GroupAuthorization, _ status: AuthorizationStatus) {
        #expect(stored.status == status)
    }

    @Test(arguments: [
        (AppConsent.allowed, AuthorizationStatus.allowed),
        (.denied, .deniedPreviously),
        (.undetermined, .undetermined),
    ])
    func aStoredAppConsentIsReportedAsItsStatus(_ stored: AppConsent, _ status: AuthorizationStatus) {
        #expect(stored.status == status)
    }

    @Test(arguments: [
        (AuthorizationStatus.allowed, true), (.deniedNow, false), (.deniedPreviously, false), (.undetermined, false),
    ])
    func onlyTheAllowedStatusAllows(_ status: AuthorizationStatus, _ allowed: Bool) {
        #expect(status.isAllowed == allowed)
    }

    @Test func theWireNamesAreLowercaseWithHyphens() {
        #expect(GroupAuthorization.allCases.map(\.rawValue) == ["allowed", "denied", "not-asked"])
        #expect(AppConsent.allCases.map(\.rawValue) == ["allowed", "denied", "undetermined"])
        #expect(
            AuthorizationStatus.allCases.map(\.rawValue) == [
                "allowed", "denied-now", "denied-previously", "undetermined",
            ])
        #expect(AskPermissionMode.alwaysIfNotAllowed.rawValue == "always-if-not-allowed")
        #expect(SystemPermissionStrategy.askPermission.rawValue == "ask")
        #expect(SystemPermissionStrategy.ifAlreadyAllowed.rawValue == "if-already-allowed")
    }

    @Test func aPromptWithNoTextsGivenHasTheDefaults() {
        let prompt = PermissionPrompt()
        #expect(prompt.title == "Allow notifications?")
        #expect(prompt.message == "Notifications of this group are shown only if you allow them.")
        #expect(prompt.allowLabel == "Allow")
        #expect(prompt.denyLabel == "Don't Allow")
    }

    @Test func aDecodedPromptTakesTheDefaultsForMissingTexts() throws {
        let json = Data(#"{"title":"A quote every morning?","denyLabel":"No"}"#.utf8)
        let prompt = try JSONDecoder().decode(PermissionPrompt.self, from: json)
        #expect(
            prompt
                == PermissionPrompt(
                    title: "A quote every morning?",
                    message: "Notifications of this group are shown only if you allow them.", allowLabel: "Allow",
                    denyLabel: "No"))
    }

    @Test func aPromptAtEveryLimitIsValid() throws {
        let prompt = PermissionPrompt(
            title: String(repeating: "t", count: 200), message: String(repeating: "m", count: 1_000),
            allowLabel: String(repeating: "a", count: 40), denyLabel: String(repeating: "d", count: 40))
        try prompt.validate()
        try PermissionPrompt(message: "").validate()
    }

    @Test(arguments: [
        (PermissionPrompt(title: ""), "the permission prompt's title is empty; give it a question"),
        (
            PermissionPrompt(title: String(repeating: "t", count: 201)),
            "the permission prompt's title is longer than 200 bytes; shorten it"
        ),
        (
            // 67 characters of 3 bytes each: the limit counts bytes, not characters.
            PermissionPrompt(title: String(repeating: "€", count: 67)),
            "the permission prompt's title is longer than 200 bytes; shorten it"
        ),
        (
            PermissionPrompt(message: String(repeating: "m", count: 1_001)),
            "the permission prompt's message is longer than 1000 bytes; shorten it"
        ),
        (PermissionPrompt(allowLabel: ""), "the permission prompt's allow label is empty; name the button"),
        (
            PermissionPrompt(denyLabel: String(repeating: "d", count: 41)),
            "the permission prompt's deny label is longer than 40 bytes; shorten it"
        ),
        (
            PermissionPrompt(allowLabel: "OK", denyLabel: "OK"),
            "the permission prompt's allow and deny labels are both \"OK\"; make them differ"
        ),
    ])
    func anInvalidPromptSaysWhatToChange(_ prompt: PermissionPrompt, _ message: String) {
        #expect(throws: PermissionError(message)) { try prompt.validate() }
    }

    @Test func aStrategyIsValidatedThroughItsPromptAndItsOtherGroup() throws {
        try PermissionStrategy(group: .askPermission(.once, PermissionPrompt()), system: .askPermission).validate()
        try PermissionStrategy(group: .ifAllowed(otherGroup: "daily-quote"), system: .askPermission).validate()
        #expect(throws: PermissionError("the permission prompt's allow label is empty; name the button")) {
            try PermissionStrategy(
                group: .askPermission(.alwaysIfNotAllowed, PermissionPrompt(allowLabel: "")), system: .askPermission
            ).validate()
        }
        #expect(
            throws: PermissionError(
                "the group id in if-allowed \"daily quote\" contains \" \"; use letters, digits, '-', '_' and '.' only")
        ) {
            try PermissionStrategy(group: .ifAllowed(otherGroup: "daily quote"), system: .askPermission).validate()
        }
    }

    @Test(arguments: [
        PermissionStrategy.askSystemPermissionIfNeeded,
        .scheduleIfSystemAllowed,
        PermissionStrategy(group: .allowAutomatically, system: .askPermission),
        PermissionStrategy(
            group: .askPermission(.alwaysIfNotAllowed, PermissionPrompt(title: "Tips?", message: "", denyLabel: "No")),
            system: .ifAlreadyAllowed),
        PermissionStrategy(group: .ifAlreadyAllowed, system: .askPermission),
        PermissionStrategy(group: .ifAllowed(otherGroup: "daily-quote"), system: .ifAlreadyAllowed),
    ])
    func aStrategySurvivesJSON(_ strategy: PermissionStrategy) throws {
        let data = try JSONEncoder().encode(strategy)
        #expect(try JSONDecoder().decode(PermissionStrategy.self, from: data) == strategy)
    }
}
