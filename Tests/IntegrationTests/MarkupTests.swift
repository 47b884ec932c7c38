import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// A server that advertises `body-markup` reads the body as markup: user text reaches it escaped, so that
/// `<b>` is shown as written and not as bold. A server without the capability gets the text as it is.
@Suite(.serialized) struct MarkupTests {
    struct Server: Sendable, CustomStringConvertible {
        var capabilities: String
        var escapes: Bool
        var description: String { capabilities }
    }

    static let servers = [
        Server(capabilities: "actions body body-markup persistence", escapes: true),
        Server(capabilities: "actions body persistence", escapes: false),
    ]

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    @Test(arguments: servers)
    func userTextInTheBodyIsEscapedOnlyForAMarkupServer(_ server: Server) async throws {
        // A burst of three with room for two: the first goes on its own, the other two as chimed's flood
        // digest, whose body lists their summaries.
        let settings = """
            [flood]
            rate = 0.01
            burst = 2
            """
        try await Session.run(capabilities: server.capabilities, settings: settings) { s in
            let client = try await s.client()
            let at = Date().addingTimeInterval(1)
            let body = "Use <b>bold</b> & 5 > 3; &amp; stays as typed"
            let subtitle = "a <i>subtitle</i>"
            let tag = "Tag <x> & co"
            _ = try await client.schedule(
                ChimeCore.NotificationContent(summary: "Plain <summary>", subtitle: subtitle, body: body), at: at)
            _ = try await client.schedule(ChimeCore.NotificationContent(summary: tag, body: "<"), at: at)
            _ = try await client.schedule(ChimeCore.NotificationContent(summary: "third"), at: at)
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 2)
            let single = calls.elements[0]
            let digest = calls.elements[1]

            // The summary is plain text for every server: sent as written.
            #expect(single.summary == "Plain <summary>")
            let shown = subtitle + "\n" + body
            #expect(single.body == (server.escapes ? Self.escaped(shown) : shown))
            if server.escapes {
                #expect(single.body?.contains("&amp;amp;") == true, "an entity the user typed is shown as typed")
            }

            // chimed's own digest: its text is right, and the summaries it lists are escaped like any body.
            #expect(digest.summary == "2 more notifications")
            let lines = try #require(digest.body).split(separator: "\n").map(String.init)
            #expect(lines.count == 2)
            let expectedTag = server.escapes ? Self.escaped(tag) : tag
            #expect(lines.first?.hasSuffix("  " + expectedTag) == true, "\(lines)")
            #expect(lines.last?.hasSuffix("  third") == true, "\(lines)")
            // The time stamps ("HH:MM") are untouched.
            #expect(lines.allSatisfy { $0.prefix(5).allSatisfy { $0.isNumber || $0 == ":" } }, "\(lines)")
        }
    }
}
