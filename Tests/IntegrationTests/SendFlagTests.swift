import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// `chime send`'s notify-send flags, each checked where it arrives: at the notification server.
@Suite(.serialized) struct SendFlagTests {
    @Test func everyFieldArrivesIntact() async throws {
        try await Session.run { s in
            let sent = try await s.chime([
                "send", "-u", "critical", "-t", "5000", "-a", "myapp", "-i", "dialog-information", "-c",
                "im.received", "-h", "string:x-k:v", "-A", "ok=OK", "--in", "1s", "S", "B",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            try await s.awaitDelivered(notification: 1)
            let call = s.server!.notifyCalls.elements[0]
            #expect(call.appName == "myapp" && call.summary == "S" && call.body == "B")
            #expect(call.arguments[2].unwrappingVariant == .string("dialog-information"))
            #expect(call.expireTimeout == 5000)
            #expect(call.actions == ["ok", "OK"])
            #expect(call.hints["urgency"] == .byte(2))
            #expect(call.hints["category"] == .string("im.received"))
            #expect(call.hints["x-k"] == .string("v"))
        }
    }

    @Test func hintsOfEveryTypeTransientPrintIDAndReplaceID() async throws {
        try await Session.run { s in
            let sent = try await s.chime([
                "send", "-p", "-e", "-r", "41", "-h", "int:value:50", "-h", "double:x-d:0.5", "-h", "byte:x-b:7",
                "-h", "boolean:x-flag:true", "Volume",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            let id = try #require(UInt64(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            try await s.delivered.wait("delivered") { $0.contains { $0.item == id } }
            let call = s.server!.notifyCalls.elements[0]
            #expect(call.replacesID == 41)
            #expect(call.hints["transient"] == .boolean(true))
            #expect(call.hints["value"] == .int32(50))
            #expect(call.hints["x-d"] == .double(0.5))
            #expect(call.hints["x-b"] == .byte(7))
            #expect(call.hints["x-flag"] == .boolean(true))
        }
    }

    @Test(arguments: [
        (["send", "-h", "nope", "x"], "-h: the hint \"nope\" is not TYPE:NAME:VALUE"),
        (["send", "-h", "colour:x:red", "x"], "-h: the hint type \"colour\" is not one of"),
        (["send", "-h", "int:x:many", "x"], "-h: the hint value \"many\" is not a int"),
    ])
    func badHintsAreRefused(arguments: [String], message: String) async throws {
        try await Session.run { s in
            let result = try await s.chime(arguments)
            #expect(result.status == 2)
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
    }

    @Test func waitPrintsTheChosenActionAndEndsWhenTheNotificationCloses() async throws {
        try await Session.run { s in
            let waiting = try ManagedProcess(
                Binaries.chime, ["send", "-w", "-A", "yes=Yes", "-A", "no=No", "Deploy?"],
                environment: s.bus.environment, directory: s.bus.directory)
            try await s.awaitDelivered(notification: 1)
            try await s.choose("yes", on: 1)
            try await waiting.waitForStdout(containing: "yes\n")
            #expect(waiting.hasExited == false)
            try await s.serverEmits("NotificationClosed", "uu", [.uint32(1), .uint32(2)])
            #expect(await waiting.waitForExit() == 0)
            #expect(waiting.stdout == "yes\n")
        }
    }
}
