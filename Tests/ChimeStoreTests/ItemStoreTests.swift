import ChimeCore
import Foundation
import Testing

@testable import ChimeStore

@Suite struct ItemStoreTests {
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("chime-store-\(UUID().uuidString)/chime.sqlite")
            .path
    }

    static func makeStores() throws -> [any ItemStore] {
        [MemoryItemStore(), try SQLiteItemStore(path: temporaryPath())]
    }

    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func item(_ id: UInt64, _ summary: String, at offset: TimeInterval) -> ScheduledItem {
        ScheduledItem(
            id: id,
            content: NotificationContent(
                appName: "app", summary: summary, body: "b", urgency: .critical, expireTimeout: 5,
                actions: [NotificationAction(key: "k", label: "L")], category: "c"),
            fireDate: t0 + offset)
    }

    @Test(arguments: try makeStores())
    func pendingItemsComeBackSoonestFirstWithAllTheirContent(store: any ItemStore) async throws {
        try await store.insert(item(2, "later", at: 20), now: t0)
        try await store.insert(item(1, "sooner", at: 10), now: t0)
        let pending = try await store.pendingItems()
        #expect(pending == [item(1, "sooner", at: 10), item(2, "later", at: 20)])
        #expect(try await store.largestItemID() == 2)
    }

    @Test(arguments: try makeStores())
    func cancelledAndDeliveredItemsAreNoLongerPendingButKeepTheirIds(store: any ItemStore) async throws {
        try await store.insert(item(1, "a", at: 10), now: t0)
        try await store.insert(item(2, "b", at: 20), now: t0)
        try await store.insert(item(3, "c", at: 30), now: t0)
        #expect(try await store.cancel(2, now: t0 + 1))
        #expect(try await !store.cancel(2, now: t0 + 2))
        try await store.markDelivered(3, notificationID: 77, now: t0 + 30)
        #expect(try await store.pendingItems().map(\.id) == [1])
        #expect(try await store.largestItemID() == 3)
        let history = try await store.history(limit: 10)
        #expect(history.map(\.event) == [.delivered, .cancelled, .scheduled, .scheduled, .scheduled])
        #expect(history.first?.detail == "notification 77")
        #expect(history.first?.date == t0 + 30)
        #expect(try await store.history(limit: 2).count == 2)
    }

    @Test func theDatabaseKeepsEverythingAcrossReopening() async throws {
        let path = Self.temporaryPath()
        do {
            let store = try SQLiteItemStore(path: path)
            try await store.insert(item(5, "kept", at: 60), now: t0)
            try await store.insert(item(6, "gone", at: 61), now: t0)
            _ = try await store.cancel(6, now: t0)
        }
        let reopened = try SQLiteItemStore(path: path)
        #expect(try await reopened.pendingItems() == [item(5, "kept", at: 60)])
        #expect(try await reopened.largestItemID() == 6)
    }

    @Test func aFileThatIsNotADatabaseIsAnErrorAndIsLeftAlone() throws {
        let path = Self.temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let garbage = Data("this is not sqlite".utf8) + Data(repeating: 0, count: 4096)
        try garbage.write(to: URL(fileURLWithPath: path))
        #expect {
            try SQLiteItemStore(path: path)
        } throws: { error in
            (error as? StoreError)?.message.contains("move it aside") == true
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test func anUnwritableStateDirectoryIsAClearError() {
        #expect {
            try SQLiteItemStore(path: "/proc/chime-cannot-be-here/chime.sqlite")
        } throws: { error in
            (error as? StoreError)?.message.contains("cannot create the state directory") == true
        }
    }
}
