import ChimeCore
import Foundation
import Testing

@testable import ChimeConfig

/// Categories of actions declared in a group file.
@Suite struct CategoryFileTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let berlin = Zone(identifier: "Europe/Berlin")!

    func parse(_ text: String) throws(ConfigError) -> TimelineGroup {
        try GroupFile.parse(text, file: "g.toml", groupID: "g", now: now, timeZone: berlin)
    }

    @Test func aCategoryWithActionsCommandsAndADefault() throws {
        let group = try parse(
            """
            [[entry]]
            id = "pizza"
            every = "every day at 12:00"
            summary = "Pizza Time"
            category = "pizza"

            [category.pizza]
            default = "order"
            minimal = ["order"]

            [[category.pizza.action]]
            id = "stop-repeat"
            title = "Stop Repeat"
            options = ["destructive"]

            [[category.pizza.action]]
            id = "order"
            title = "Order"
            options = ["foreground"]
            run = ["xdg-open", "https://pizza.example"]
            """)
        #expect(
            group.categories == [
                ActionCategory(
                    id: "pizza",
                    actions: [
                        CategoryAction(id: "stop-repeat", title: "Stop Repeat", options: [.destructive]),
                        CategoryAction(
                            id: "order", title: "Order", options: [.foreground],
                            command: ["xdg-open", "https://pizza.example"]),
                    ], defaultAction: "order", minimalActions: ["order"])
            ])
        #expect(group.entries.first?.category == "pizza")
    }

    @Test(arguments: [
        (
            "[category.c]\n[[category.c.action]]\nid = \"a\"\ntitle = \"A\"\noptions = [\"loud\"]",
            "g.toml:5: unknown option \"loud\"; use destructive, foreground, authentication-required or text-input"
        ),
        (
            "[category.c]\n[[category.c.action]]\nid = \"a\"",
            "g.toml:2: an action needs an id and a title, e.g. id = \"open\" and title = \"Open\""
        ),
        (
            "[category.c]\ndefault = \"gone\"\n[[category.c.action]]\nid = \"a\"\ntitle = \"A\"",
            "g.toml:1: category c: the default action \"gone\" is not one of its actions, a built-in verb, or \"default\" (the click reported to the app as it is)"
        ),
        (
            "[category.c]\ncolour = \"red\"",
            "g.toml:2: unknown key colour in [category.c]; Known keys: default, minimal, action"
        ),
    ])
    func mistakesInACategoryNameTheLine(text: String, expected: String) {
        #expect {
            _ = try parse(text)
        } throws: { error in
            (error as? ConfigError)?.description == expected
        }
    }
}
