import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// UserNotifications' calls beyond adding and listing requests, against chimed on a private bus: the
/// badge, errors matched by code, the settings, critical sounds, attachment options and `filterCriteria`.
@Suite(.serialized) struct UserNotificationsAPITests {
    @Test func setBadgeCountSetsTheCountOnTheAppsLauncherIcon() async throws {
        try await Session.run { s in
            let (updates, subscription) = try await LauncherEntryTests.listen(s)
            defer { subscription.cancel() }
            try await ChimeKitTests.withKit(s) {
                let center = UNUserNotificationCenter.current()
                try await center.setBadgeCount(4)
                try await updates.wait("the badge of 4") { $0.count == 1 }
                #expect(
                    updates.elements[0]
                        == LauncherEntryTests.Update(
                            path: "/io/chime/LauncherEntry", appURI: "application://\(ChimeKitTests.appID).desktop",
                            count: 4, visible: true))

                // The completion-handler form; 0 clears the count.
                let error = await withCheckedContinuation { (done: CheckedContinuation<String?, Never>) in
                    center.setBadgeCount(0) { done.resume(returning: $0.map { "\($0)" }) }
                }
                #expect(error == nil)
                try await updates.wait("the cleared badge") { $0.count == 2 }
                #expect(updates.elements[1].count == 0 && updates.elements[1].visible == false)

                do {
                    try await center.setBadgeCount(-1)
                    Issue.record("a negative badge count was taken")
                } catch UNError.badgeInputInvalid {
                } catch {
                    Issue.record("a negative badge count failed otherwise: \(error)")
                }
                #expect(updates.elements.count == 2)
            }
        }
    }

    @Test func anAppTheUserDeniedCatchesNotificationsNotAllowed() async throws {
        try await Session.run { s in
            let denied = try await s.chime(["app", "deny", "org.example.Denied"])
            #expect(denied.status == 0, "\(denied)")
            try await ChimeKitTests.withKit(s, appID: "org.example.Denied", allowed: false) {
                let center = UNUserNotificationCenter.current()
                var caught: UNError?
                do {
                    try await center.add(
                        UNNotificationRequest(identifier: "x", content: NotificationContent(title: "X"), trigger: nil))
                } catch UNError.notificationsNotAllowed {
                    caught = UNError(.notificationsNotAllowed)
                } catch {
                    Issue.record("add failed otherwise: \(error)")
                }
                #expect(caught != nil)
                // As with Apple's bridged errors, it is an NSError of UNErrorDomain with Apple's code.
                do {
                    try await center.add(
                        UNNotificationRequest(identifier: "y", content: NotificationContent(title: "Y"), trigger: nil))
                } catch {
                    let ns = error as NSError
                    #expect(ns.domain == UNErrorDomain && ns.code == 1, "\(ns)")
                }
                do {
                    try await center.setBadgeCount(1)
                    Issue.record("a denied app set its badge")
                } catch UNError.notificationsNotAllowed {}
                let settings = await center.notificationSettings()
                #expect(settings.authorizationStatus == .denied)
                #expect(settings.alertStyle == UNAlertStyle.none && settings.alertSetting == .disabled)
                #expect(await center.pendingNotificationRequests().isEmpty)
            }
        }
    }

    @Test func settingsSayWhatTheDesktopOffers() async throws {
        try await Session.run { s in
            try await ChimeKitTests.withKit(s) {
                let center = UNUserNotificationCenter.current()
                let granted = try await center.requestAuthorization(options: [.alert, .providesAppNotificationSettings])
                #expect(granted)
                let settings = await center.notificationSettings()
                #expect(settings.authorizationStatus == .authorized)
                #expect(settings.alertStyle == .banner && settings.showPreviewsSetting == .always)
                #expect(settings.soundSetting == .enabled && settings.badgeSetting == .enabled)
                #expect(settings.criticalAlertSetting == .enabled)
                #expect(settings.timeSensitiveSetting == .disabled && settings.scheduledDeliverySetting == .disabled)
                #expect(settings.carPlaySetting == .notSupported && settings.announcementSetting == .notSupported)
                #expect(settings.directMessagesSetting == .notSupported)
                #expect(settings.providesAppNotificationSettings)
                #expect(!center.supportsContentExtensions)
            }
        }
    }

    @Test func aCriticalSoundFilterCriteriaAndAHintedAttachmentReachTheServer() async throws {
        try await Session.run { s in
            let picture = s.bus.directory.appendingPathComponent("picture")
            try Data([0x89, 0x50, 0x4E, 0x47]).write(to: picture)
            try await ChimeKitTests.withKit(s) {
                let center = UNUserNotificationCenter.current()
                // A file whose name does not say its type is refused unless the type is hinted, as on iOS.
                do {
                    _ = try UNNotificationAttachment(identifier: "p", url: picture)
                    Issue.record("an attachment of unknown type was taken")
                } catch UNError.attachmentUnrecognizedType {}
                let content = UNMutableNotificationContent()
                content.title = "Wake up"
                content.sound = .defaultCriticalSound(withAudioVolume: 0.5)
                content.filterCriteria = "work"
                content.attachments = [
                    try UNNotificationAttachment(
                        identifier: "p", url: picture,
                        options: [UNNotificationAttachmentOptionsTypeHintKey: "public.png"])
                ]
                try await center.add(UNNotificationRequest(identifier: "alarm", content: content, trigger: nil))
                try await s.server!.notifyCalls.wait("the alarm's Notify") { $0.contains { $0.summary == "Wake up" } }
                let call = try #require(s.server!.notifyCalls.elements.first { $0.summary == "Wake up" })
                #expect(call.hints["urgency"] == .byte(2))
                #expect(call.hints["sound-name"] == .string("alarm-clock-elapsed"))
                #expect(call.hints["image-path"] == .string(picture.absoluteString))
                #expect(call.hints["x-chime-filter-criteria"] == .string("work"))
                #expect(call.hints["x-chime-sound-volume"] == .double(0.5))

                // A hidden thumbnail sends no image.
                let quiet = UNMutableNotificationContent()
                quiet.title = "Later"
                quiet.attachments = [
                    try UNNotificationAttachment(
                        identifier: "p", url: picture,
                        options: [
                            UNNotificationAttachmentOptionsTypeHintKey: "public.png",
                            UNNotificationAttachmentOptionsThumbnailHiddenKey: true,
                        ])
                ]
                quiet.filterCriteria = "home"
                try await center.add(
                    UNNotificationRequest(
                        identifier: "later", content: quiet,
                        trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: false)))
                let pending = try #require(try await LocalNotifications.client().pending(content: true).first)
                #expect(pending.content?.hints["image-path"] == nil)
                #expect(pending.content?.hints["x-chime-filter-criteria"] == .string("home"))
            }
        }
    }

    /// A category whose actions all have icons, shown by a server with and without `action-icons`.
    static func showIconedCategory(_ s: Session) async throws -> (
        call: MockNotificationServer.Call, responder: ChimeKitTests.Responder
    ) {
        let center = UNUserNotificationCenter.current()
        let responder = ChimeKitTests.Responder()
        center.delegate = responder
        center.setNotificationCategories([
            UNNotificationCategory(
                identifier: "mail",
                actions: [
                    UNNotificationAction(
                        identifier: "archive", title: "Archive",
                        icon: UNNotificationActionIcon(templateImageName: "mail-archive")),
                    UNNotificationAction(
                        identifier: "delete", title: "Delete", options: .destructive,
                        icon: UNNotificationActionIcon(systemImageName: "trash")),
                ], intentIdentifiers: [])
        ])
        let content = UNMutableNotificationContent()
        content.title = "New mail"
        content.categoryIdentifier = "mail"
        try await center.add(UNNotificationRequest(identifier: "mail", content: content, trigger: nil))
        try await s.server!.notifyCalls.wait("the mail's Notify") { $0.contains { $0.summary == "New mail" } }
        return (try #require(s.server!.notifyCalls.elements.first { $0.summary == "New mail" }), responder)
    }

    @Test func actionIconsAreShownAsIconsWhereTheServerHasThemAndComeBackAsTheActions() async throws {
        try await Session.run(capabilities: "actions action-icons body persistence") { s in
            try await ChimeKitTests.withKit(s) {
                defer { UNUserNotificationCenter.current().delegate = nil }
                let (call, responder) = try await Self.showIconedCategory(s)
                // Keys and labels alternate; with `action-icons` the keys are the icons' names.
                #expect(call.actions == ["default", "Open", "mail-archive", "Archive", "user-trash", "Delete"])
                #expect(call.hints["action-icons"] == .boolean(true))
                try await s.awaitDelivered(notification: 1)
                try await s.choose("user-trash", on: 1)
                try await responder.responses.wait(forCount: 1, timeout: .seconds(10))
                #expect(responder.responses.elements[0].actionIdentifier == "delete")
            }
        }
    }

    @Test func actionIconsAreTitlesWhereTheServerHasNone() async throws {
        try await Session.run(capabilities: "actions body persistence") { s in
            try await ChimeKitTests.withKit(s) {
                defer { UNUserNotificationCenter.current().delegate = nil }
                let (call, responder) = try await Self.showIconedCategory(s)
                #expect(call.actions == ["default", "Open", "archive", "Archive", "delete", "Delete"])
                #expect(call.hints["action-icons"] == nil)
                try await s.awaitDelivered(notification: 1)
                try await s.choose("archive", on: 1)
                try await responder.responses.wait(forCount: 1, timeout: .seconds(10))
                #expect(responder.responses.elements[0].actionIdentifier == "archive")
            }
        }
    }

    /// The loudest sample of the bell chimed plays for `chime send` with `hints`, over its first 300 ms, on a
    /// PulseAudio of the test's own.
    static func bellPeak(_ hints: [String]) async throws -> Int {
        var peak = 0
        try await SoundTests.withSound { s, _, recording in
            let sent = try await s.chime(["send", "-u", "critical", "-h", "string:sound-name:bell"] + hints + ["Bell"])
            #expect(sent.status == 0, "chime send failed: \(sent.stderr)")
            // A quiet bell is still far above the silence of the null sink (0).
            try await recording.waitForSound(threshold: 100)
            let start = try #require(recording.samples.firstIndex { abs(Int($0)) > 100 })
            let end = start + PulseAudioServer.sampleRate * 3 / 10
            try await Await.condition(
                "300 ms of the bell are recorded", timeout: .seconds(20), watching: recording.process.stdoutURL
            ) {
                recording.samples.count >= end
            }
            peak = recording.samples[start..<end].reduce(0) { max($0, abs(Int($1))) }
        }
        return peak
    }

    @Test func aCriticalSoundAtAQuarterVolumeIsPlayedAQuarterAsLoud() async throws {
        let full = try await Self.bellPeak([])
        let quarter = try await Self.bellPeak(["-h", "double:x-chime-sound-volume:0.25"])
        // -12 dB is a quarter of the amplitude; the sound server's resampling blurs it a little.
        #expect(Double(quarter) > Double(full) * 0.15 && Double(quarter) < Double(full) * 0.35, "\(quarter) of \(full)")
    }
}
