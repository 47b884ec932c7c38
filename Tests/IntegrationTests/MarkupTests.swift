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

    /// Content marked as markup (`markup` true, as `chime send` sends by default): a markup server gets the
    /// specification's subset rebuilt and the rest escaped, a server without markup the text without tags;
    /// the subtitle stays plain text.
    @Test(arguments: servers)
    func aMarkupBodyIsSanitizedForAMarkupServerAndStrippedForOthers(_ server: Server) async throws {
        try await Session.run(capabilities: server.capabilities) { s in
            let client = try await s.client()
            var content = ChimeCore.NotificationContent(
                summary: "Pill", subtitle: "with <water>", body: "<b>now</b> <script> &amp; <i>then")
            content.markup = true
            _ = try await client.schedule(content)
            let sent = try await s.chime(["send", "--plain", "Plain", "<b>as typed</b>"])
            #expect(sent.status == 0, "\(sent.stderr)")
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 2)
            let markup = try #require(calls.elements.first { $0.summary == "Pill" })
            let plain = try #require(calls.elements.first { $0.summary == "Plain" })
            if server.escapes {
                #expect(markup.body == "with &lt;water&gt;\n<b>now</b> &lt;script&gt; &amp; <i>then</i>")
                #expect(plain.body == "&lt;b&gt;as typed&lt;/b&gt;")
            } else {
                #expect(markup.body == "with <water>\nnow <script> & then")
                #expect(plain.body == "<b>as typed</b>")
            }
            // Stored and listed as it was written, marked as markup.
            _ = try await client.schedule(content, at: Date().addingTimeInterval(3600))
            let listed = try #require(try await client.pending(content: true).first?.content)
            #expect(listed.markup && listed.body == content.body)
        }
    }
}
