import ChimeCore
import DBusKit
import Foundation
import Synchronization
import Testing

@testable import ChimeDaemon

/// A Notify made ready before its occurrence is due: the same call as one made at the due instant, and
/// used only while what would be sent is still the same.
@Suite struct PreparedNotifyTests {
    /// A transport that keeps the calls it gets and answers each with id 7.
    final class RecordingTransport: NotificationTransport {
        let calls = Mutex<[(message: DBusMessage, timeout: Duration, rows: [UInt64])]>([])

        func call(
            _ message: DBusMessage, timeout: Duration, rows: [UInt64],
            completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
        ) {
            calls.withLock { $0.append((message, timeout, rows)) }
            completion(.success(DBusMessage(kind: .methodReturn, body: [.uint32(7)])))
        }
    }

    static let content = NotificationContent(
        appName: "app", summary: "Stand-up", body: "a < b", actions: [NotificationAction(key: "k", label: "K")])

    @Test func aPreparedNotifyIsTheCallMadeAtTheDueInstant() async throws {
        let transport = RecordingTransport()
        var server = NotificationServer(transport: transport)
        server.bodyMarkup = true
        let prepared = server.prepareNotify(Self.content, replacesID: 3, rows: [12])
        let id = try await withCheckedThrowingContinuation { continuation in
            server.notify(prepared) { continuation.resume(with: $0) }
        }
        #expect(id == 7)
        // The call delivery makes when nothing was prepared.
        _ = try await withCheckedThrowingContinuation { continuation in
            server.notify(Self.content, replacesID: 3, rows: [12]) { continuation.resume(with: $0) }
        }
        let calls = transport.calls.withLock { $0 }
        #expect(calls.count == 2)
        #expect(calls[0].message == calls[1].message)
        #expect(calls[0].timeout == calls[1].timeout)
        #expect(calls[0].rows == [12] && calls[1].rows == [12])
    }

    @Test func itIsUsedOnlyWhileWhatIsSentIsTheSame() {
        var server = NotificationServer(transport: RecordingTransport())
        let prepared = server.prepareNotify(Self.content, replacesID: 0, rows: [1])
        #expect(prepared.matches(Self.content, replacesID: 0, on: server))
        var changed = Self.content
        changed.actions.append(NotificationAction(key: "snooze", label: "Snooze"))
        #expect(!prepared.matches(changed, replacesID: 0, on: server))
        #expect(!prepared.matches(Self.content, replacesID: 4, on: server))
        var markup = server
        markup.bodyMarkup = true
        #expect(!prepared.matches(Self.content, replacesID: 0, on: markup))
        server.callTimeout = .seconds(3)
        #expect(!prepared.matches(Self.content, replacesID: 0, on: server))
    }
}
