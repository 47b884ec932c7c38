import ChimeCore
import Testing

/// An action's icon is sent as its key where the server shows icons, so a category's icons must be icon
/// names that tell its actions apart.
@Suite struct ActionIconTests {
    static func category(_ actions: [CategoryAction]) -> ActionCategory {
        ActionCategory(id: "mail", actions: actions, defaultAction: "default")
    }

    @Test func iconNamesOfTheirOwnAreTaken() throws {
        try Self.category([
            CategoryAction(id: "archive", title: "Archive", icon: "mail-archive"),
            CategoryAction(id: "delete", title: "Delete", icon: "user-trash"),
            CategoryAction(id: "later", title: "Later"),
            CategoryAction(id: "star", title: "Star", icon: "star"),
        ]).validate()
    }

    @Test(arguments: [
        ("", "an empty icon"), ("mail archive", "a space"), ("../x", "a slash"), (".hidden", "a leading dot"),
        ("default", "the click's key"), ("inline-reply", "the reply's key"),
        (String(repeating: "a", count: 256), "over 255 bytes"),
    ])
    func anIconThatIsNoIconNameIsRefused(icon: String, what: String) {
        let error = #expect(throws: TimelineError.self, "\(what)") {
            try Self.category([CategoryAction(id: "a", title: "A", icon: icon)]).validate()
        }
        #expect(error?.message.contains("icon name") == true, "\(String(describing: error))")
    }

    @Test func iconsThatDoNotTellTheActionsApartAreRefused() {
        let twice = #expect(throws: TimelineError.self) {
            try Self.category([
                CategoryAction(id: "a", title: "A", icon: "edit-delete"),
                CategoryAction(id: "b", title: "B", icon: "edit-delete"),
            ]).validate()
        }
        #expect(twice?.message.contains("another action's icon or id") == true)
        let anothersID = #expect(throws: TimelineError.self) {
            try Self.category([
                CategoryAction(id: "a", title: "A", icon: "b"),
                CategoryAction(id: "b", title: "B"),
            ]).validate()
        }
        #expect(anothersID?.message.contains("another action's icon or id") == true)
    }
}
