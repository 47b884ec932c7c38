import DBusKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// chimed plays a notification's sound where the server plays none, heard on a real PulseAudio: a null
/// sink of the test's own, whose monitor `parec` records, with chimed's `PULSE_SERVER` pointing at it.
@Suite(.serialized) struct SoundTests {
    /// The servers' capabilities without and with `sound` (python-dbusmock's notification template).
    static let silentServer = "actions body body-markup persistence"
    static let soundServer = "actions body body-markup persistence sound"
    /// How long silence is listened for after a delivery, when what is tested is that nothing plays: a
    /// sound that does not come cannot be awaited, so the recording is read after this bounded window.
    /// chimed starts a sound within milliseconds of the delivery (the heard cases wait for far less).
    static let silenceWindow: Duration = .seconds(3)

    /// Runs `body` with a PulseAudio and its recording, and chimed playing through it, on a
    /// python-dbusmock server of `capabilities` (or, with `dunst`, on dunst).
    static func withSound(
        capabilities: String = silentServer, dunst: Bool = false,
        _ body: (Session, PulseAudioServer, SinkRecording) async throws -> Void
    ) async throws {
        try await Session.run(withServer: !dunst, capabilities: capabilities, startChimed: false) { s in
            let pulse = try await PulseAudioServer.start(in: s.bus.directory)
            s.extraProcesses.append(pulse.process)
            let recording = try await pulse.record()
            // Stopped before the server it records.
            s.extraProcesses.insert(recording.process, at: 0)
            if dunst { s.dunst = try await DunstServer.start(on: s.bus, observer: s.observer) }
            for (key, value) in pulse.environment { s.chimedEnvironment[key] = value }
            s.chimed = try await s.startChimed()
            try await body(s, pulse, recording)
        }
    }

    /// A process's resident memory in kB (`VmRSS`), 0 when it cannot be read.
    static func resident(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }

    @Test func aDueNotificationIsHeardOnAServerWithoutSound() async throws {
        try await Self.withSound(capabilities: Self.silentServer) { s, _, recording in
            // Nothing plays before.
            #expect(recording.peak() == 0)
            let residentBefore = Self.resident(s.chimed!.pid)
            let result = try await s.chime(["send", "--in", "1s", "-h", "string:sound-name:message-new-instant", "Tea"])
            #expect(result.status == 0, "chime send failed: \(result.stderr)")
            let call = try await s.server!.notifyCalls.element(0)
            // The server still gets the hint, as before.
            #expect(call.hints["sound-name"] == .string("message-new-instant"))
            try await recording.waitForSound()
            try await s.chimed!.waitForStderr(containing: "playing the notification sound message-new-instant")
            // Measured, not asserted (speed belongs to the benchmarks): the sound's delay after the Notify
            // reached the server, its loudness, and chimed's memory once its player has a sound server.
            let heard = try #require(recording.firstSound())
            print(
                "heard \(Int(heard.timeIntervalSince(call.received) * 1000)) ms after the Notify, peak "
                    + "\(recording.peak()); chimed resident \(residentBefore) kB before, "
                    + "\(Self.resident(s.chimed!.pid)) kB after")
        }
    }

    @Test func aNotificationWithoutSoundIsSilentAndASoundFileIsHeard() async throws {
        try await Self.withSound(capabilities: Self.silentServer) { s, _, recording in
            let quiet = try await s.chime(["send", "Tea, quietly"])
            #expect(quiet.status == 0, "chime send failed: \(quiet.stderr)")
            try await s.delivered.wait(forCount: 1)
            // Absence: listened to for a bounded window after the delivery (see `silenceWindow`).
            try await Task.sleep(for: Self.silenceWindow)
            #expect(recording.peak() == 0, "a notification without a sound was heard")
            // The same chimed and recording do hear a sound: here a file by the sound-file hint.
            let heardFrom = recording.samples.count
            let loud = try await s.chime([
                "send", "-h", "string:sound-file:/usr/share/sounds/freedesktop/stereo/bell.oga", "Tea, loudly",
            ])
            #expect(loud.status == 0, "chime send failed: \(loud.stderr)")
            try await recording.waitForSound(after: heardFrom)
        }
    }

    @Test func aServerThatPlaysSoundsItselfIsLeftToIt() async throws {
        try await Self.withSound(capabilities: Self.soundServer) { s, _, recording in
            let result = try await s.chime(["send", "-h", "string:sound-name:message-new-instant", "Tea"])
            #expect(result.status == 0, "chime send failed: \(result.stderr)")
            let call = try await s.server!.notifyCalls.element(0)
            #expect(call.hints["sound-name"] == .string("message-new-instant"))
            try await s.delivered.wait(forCount: 1)
            // Absence: listened to for a bounded window after the delivery (see `silenceWindow`).
            try await Task.sleep(for: Self.silenceWindow)
            #expect(recording.peak() == 0, "chimed played a sound the server plays itself")
            #expect(!s.chimed!.stderr.contains("playing the notification sound"))
        }
    }

    @Test func suppressSoundIsHonoured() async throws {
        try await Self.withSound(capabilities: Self.silentServer) { s, _, recording in
            let result = try await s.chime([
                "send", "-h", "string:sound-name:bell", "-h", "boolean:suppress-sound:true", "Tea",
            ])
            #expect(result.status == 0, "chime send failed: \(result.stderr)")
            try await s.delivered.wait(forCount: 1)
            // Absence: listened to for a bounded window after the delivery (see `silenceWindow`).
            try await Task.sleep(for: Self.silenceWindow)
            #expect(recording.peak() == 0, "a notification with suppress-sound was heard")
        }
    }

    /// dunst paused (its do-not-disturb, `dunstctl set-paused`): a normal notification's sound is not
    /// played, a critical one's (an alarm) is.
    @Test func onAPausedServerOnlyACriticalNotificationIsHeard() async throws {
        try await Self.withSound(dunst: true) { s, _, recording in
            try await s.chimed!.waitForStderr(containing: "capabilities:")
            try await s.dunst!.dunstctl(["set-paused", "true"])
            try await Await.polling("chimed knows that dunst is paused") {
                let status = try await s.chime(["status", "--json"])
                let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
                return object?["paused"] as? Bool == true
            }
            let normal = try await s.chime(["send", "-h", "string:sound-name:message-new-instant", "Tea"])
            #expect(normal.status == 0, "chime send failed: \(normal.stderr)")
            try await s.delivered.wait(forCount: 1)
            // Absence: listened to for a bounded window after the delivery (see `silenceWindow`).
            try await Task.sleep(for: Self.silenceWindow)
            #expect(recording.peak() == 0, "a normal notification was heard while the server is paused")
            let heardFrom = recording.samples.count
            let alarm = try await s.chime([
                "send", "-u", "critical", "-h", "string:sound-name:alarm-clock-elapsed", "Wake up",
            ])
            #expect(alarm.status == 0, "chime send failed: \(alarm.stderr)")
            try await recording.waitForSound(after: heardFrom)
            try await s.chimed!.waitForStderr(containing: "playing the notification sound alarm-clock-elapsed")
        }
    }

    /// The output muted (the desktop's mute): chimed plays the sound, through the sound server, where the
    /// mute silences it; unmuted, the next is heard.
    @Test func aMutedOutputSilencesTheSound() async throws {
        try await Self.withSound { s, pulse, recording in
            #expect(try await pulse.pactl(["set-sink-mute", PulseAudioServer.sinkName, "1"]).status == 0)
            let muted = try await s.chime(["send", "-h", "string:sound-name:message-new-instant", "Tea"])
            #expect(muted.status == 0, "chime send failed: \(muted.stderr)")
            try await s.chimed!.waitForStderr(containing: "playing the notification sound message-new-instant")
            // Absence: listened to for a bounded window after the sound started (see `silenceWindow`).
            try await Task.sleep(for: Self.silenceWindow)
            #expect(recording.peak() == 0, "a sound was heard through a muted output")
            #expect(try await pulse.pactl(["set-sink-mute", PulseAudioServer.sinkName, "0"]).status == 0)
            let heardFrom = recording.samples.count
            let loud = try await s.chime(["send", "-h", "string:sound-name:bell", "Tea again"])
            #expect(loud.status == 0, "chime send failed: \(loud.stderr)")
            try await recording.waitForSound(after: heardFrom)
        }
    }

    /// An app's `sound-file` that is a FIFO (which would block whoever opens it to read) is not played; the
    /// theme's sound is heard in its place, so the player was not held up.
    @Test func aSoundFileThatIsNoRegularFileGivesWayToTheThemesSound() async throws {
        try await Self.withSound { s, _, recording in
            let fifo = s.bus.directory.appendingPathComponent("sound.fifo").path
            #expect(mkfifo(fifo, 0o600) == 0)
            let result = try await s.chime(["send", "-h", "string:sound-file:\(fifo)", "Tea"])
            #expect(result.status == 0, "chime send failed: \(result.stderr)")
            try await recording.waitForSound()
            try await s.chimed!.waitForStderr(containing: "\(fifo) is not a regular file")
            try await s.chimed!.waitForStderr(containing: "playing the notification sound message-new-instant")
        }
    }
}
