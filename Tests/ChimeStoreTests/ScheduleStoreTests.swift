import ChimeCore
import ChimeRelay
import Foundation
import GRDB
import Testing

@testable import ChimeStore

@Suite struct ScheduleStoreTests {
    /// This test process's databases, in one folder that goes when the process exits.
    static let folder: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("chime-store-tests-\(getpid())")
        atexit { try? FileManager.default.removeItem(at: ScheduleStoreTests.folder) }
        return url
    }()

    static func temporaryPath() -> String {
        folder.appendingPathComponent("\(UUID().uuidString)/chime.sqlite").path
    }

    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func item(_ id: UInt64, _ summary: String, at offset: TimeInterval) -> ScheduledItem {
        ScheduledItem(
            id: id,
            content: NotificationContent(
                appName: "app", summary: summary, subtitle: "sub", body: "b", sound: "bell", urgency: .critical,
                expireTimeout: 5, actions: [NotificationAction(key: "k", label: "L")], category: "c",
                userInfo: ["order": "42"]),
            fireDate: t0 + offset)
    }

    func groupItem(_ id: UInt64, entry: String, group: String = "g", state: EntryState = EntryState()) throws
        -> ScheduledItem
    {
        let rule = WrittenRule.phrase("every day at 9:00")
        let recurrence = try Recurrence.parse(
            rule, now: t0, timeZone: .named("Europe/Berlin"), systemTimeZone: Zone(identifier: "UTC")!)
        let pool = ContentPool(
            base: NotificationContent(summary: "Quote"),
            items: [.init(body: "one"), .init(body: "two", enabled: false)])
        return ScheduledItem(
            id: id, owner: "org.example.App", groupID: group,
            entry: TimelineEntry(
                id: entry, trigger: .rule(rule, timeZone: "Europe/Berlin"), content: .pool(pool), category: "quote",
                endDate: t0 + 86_400 * 30, maximumOccurrences: 10),
            recurrence: recurrence, fireDate: t0 + 3600, state: state)
    }

    @Test func itemsComeBackSoonestFirstWithEverything() throws {
        let store = try ScheduleStore()
        try store.insert(item(2, "later", at: 20), now: t0)
        try store.insert(item(1, "sooner", at: 10), now: t0)
        let grouped = try groupItem(3, entry: "daily", state: EntryState(occurrences: 2, poolBag: [0]))
        try store.insert(grouped, now: t0)
        let state = try store.load()
        #expect(state.items == [item(1, "sooner", at: 10), item(2, "later", at: 20), grouped])
        #expect(state.largestItemID == 3)
    }

    @Test func itemsStoredTogetherFailOneByOne() throws {
        let store = try ScheduleStore()
        // The database refuses one of them, as a full disk or a broken row would.
        try store.write { db in
            try db.execute(
                sql: """
                    CREATE TEMP TRIGGER refuse BEFORE INSERT ON item WHEN NEW.summary = 'refused'
                    BEGIN SELECT RAISE(ABORT, 'refused by the test'); END
                    """)
        }
        let failures = store.insert([
            (item(1, "first", at: 10), t0), (item(2, "refused", at: 20), t0), (item(3, "third", at: 30), t0 + 1),
        ])
        #expect(failures.map { $0 == nil } == [true, false, true])
        #expect(failures[1]?.message.contains("refused by the test") == true)
        #expect(try store.load().items == [item(1, "first", at: 10), item(3, "third", at: 30)])
        let history = try store.history(HistoryQuery())
        #expect(history.map(\.itemID) == [3, 1])
        #expect(history.map(\.date) == [t0 + 1, t0])
    }

    @Test func cancelledItemsAreNoLongerLoadedButKeepTheirIds() throws {
        let store = try ScheduleStore()
        try store.insert(item(1, "a", at: 10), now: t0)
        try store.insert(item(2, "b", at: 20), now: t0)
        #expect(try store.cancel(2, now: t0 + 1))
        #expect(try !store.cancel(2, now: t0 + 2))
        let state = try store.load()
        #expect(state.items.map(\.id) == [1])
        #expect(state.largestItemID == 2)
        let history = try store.history(HistoryQuery())
        #expect(history.map(\.event) == [.cancelled, .scheduled, .scheduled])
        #expect(history.first?.summary == "b")
        #expect(history.first?.date == t0 + 1)
    }

    @Test func historyNamesTheOwnerOfAnItemOutsideAGroup() throws {
        let store = try ScheduleStore()
        var owned = item(1, "a", at: 10)
        owned.owner = "org.example.App"
        try store.insert(owned, now: t0)
        try store.insert(item(2, "b", at: 20), now: t0)
        #expect(try store.cancel(1, now: t0 + 1))
        let history = try store.history(HistoryQuery())
        #expect(history.map(\.owner) == ["org.example.App", "", "org.example.App"])
        #expect(history.allSatisfy { $0.group == nil })
        #expect(try store.history(HistoryQuery(owner: "org.example.App")).map(\.itemID) == [1, 1])
    }

    @Test func aStepIsStoredWholeAndItsOutboxRowsGetSequenceNumbers() throws {
        let store = try ScheduleStore()
        var daily = try groupItem(1, entry: "daily")
        let once = item(2, "once", at: 0)
        try store.insert(daily, now: t0)
        try store.insert(once, now: t0)
        daily.fireDate = t0 + 86_400
        daily.state.occurrences = 1
        var done = once
        done.finished = .lastOccurrence
        let rows = try store.commit(
            StepRecord(
                updated: [daily], finished: [done],
                missed: [
                    MissedOccurrences(item: daily, first: t0 - 86_400, last: t0 - 86_400, count: 1, handling: .skipped)
                ],
                outbox: [
                    OutboxRecord(
                        itemID: 2, group: nil, occurrence: t0, number: 1, late: false, content: once.content),
                    OutboxRecord(
                        itemID: 1, group: daily.groupKey, occurrence: t0 + 3600, number: 1, late: true, content: nil,
                        source: daily.entry.content, endDate: daily.entry.endDate),
                ]),
            now: t0)
        #expect(rows.map(\.seq) == [1, 2])
        let state = try store.load()
        #expect(state.items == [daily])
        #expect(state.outbox == rows)
        let history = try store.history(HistoryQuery())
        #expect(history.map(\.event) == [.missed, .finished, .scheduled, .scheduled])
        #expect(history[0].detail?.hasPrefix("1 skipped") == true)
        #expect(history[0].group == GroupKey(owner: "org.example.App", id: "g"))
        #expect(history[0].entryID == "daily")
    }

    /// Items 1…`count` ("n1", …), each with one occurrence due now in the outbox; the stored rows.
    func dueNow(_ count: UInt64, in store: ScheduleStore) throws -> [OutboxRecord] {
        for id: UInt64 in 1...count { try store.insert(item(id, "n\(id)", at: 0), now: t0) }
        return try store.commit(
            StepRecord(
                outbox: (1...count).map {
                    OutboxRecord(
                        itemID: $0, group: nil, occurrence: t0, number: 1, late: false,
                        content: item($0, "n\($0)", at: 0).content)
                }), now: t0)
    }

    @Test func deliveredRowsLeaveTheOutboxAndSayHowTheyWereShown() throws {
        let store = try ScheduleStore()
        let rows = try dueNow(3, in: store)
        let shown = ShownNotification(
            notificationID: 9, itemID: 1, owner: "org.example.App", group: "g", entryID: "e", category: "c",
            content: item(1, "n1", at: 0).content, occurrence: t0, until: t0 + 60)
        try store.delivered([rows[0]], notificationID: 9, digest: nil, shown: shown, now: t0 + 1)
        try store.delivered(Array(rows[1...]), notificationID: 10, digest: "flood", shown: nil, now: t0 + 2)
        let state = try store.load()
        #expect(state.outbox.isEmpty)
        var stored = shown
        stored.shownAt = t0 + 1
        #expect(state.shown == [stored])
        #expect(state.popups == [ShownPopup(notificationID: 9, itemID: 1, until: t0 + 60)])
        let history = try store.history(HistoryQuery(limit: 3))
        #expect(history.map(\.event) == [.suppressed, .suppressed, .delivered])
        #expect(history[0].detail == "in the flood notification 10")
        #expect(history[2].detail == "notification 9")
        #expect(try store.closed(notificationID: 9, reason: "expired", now: t0 + 3))
        #expect(try !store.closed(notificationID: 9, reason: "expired", now: t0 + 3))
        #expect(try store.load().shown.isEmpty)
        #expect(try store.history(HistoryQuery(limit: 1)).first?.event == .closed)
        #expect(try store.history(HistoryQuery(itemID: 1)).map(\.event) == [.closed, .delivered, .scheduled])
    }

    @Test func aRowBeingSentWhenChimedStoppedIsKnownAtTheNextStart() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        var rows: [OutboxRecord] = []
        do {
            let store = try ScheduleStore(path: path)
            rows = try dueNow(2, in: store)
            try store.sending([rows[0]], now: t0)
        }
        // The next start: the first row was in flight, the second was not sent yet.
        let store = try ScheduleStore(path: path)
        let outbox = try store.load().outbox
        #expect(outbox.map(\.sentBeforeRestart) == [true, false])
        try store.delivered(outbox, notificationID: 4, digest: nil, shown: nil, now: t0 + 1)
        let details = try store.history(HistoryQuery(limit: 2)).map(\.detail)
        #expect(details == ["notification 4", "notification 4, sent again after a restart (it may show twice)"])
        #expect(try store.load().outbox.isEmpty)
    }

    @Test func aReceiptStoredByTheRelayMarksTheRowShownUnderItsID() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        do {
            let store = try ScheduleStore(path: path)
            let rows = try dueNow(3, in: store)
            try store.sending(Array(rows[0...1]), now: t0)
            // The relay, a process of its own, got the server's answer for the first row only.
            try DeliveryReceipts(path: DeliveryReceipts.path(besides: path))
                .record(notificationID: 42, seqs: [rows[0].seq])
        }
        let store = try ScheduleStore(path: path)
        #expect(try store.takeReceipts(at: DeliveryReceipts.path(besides: path)) == 1)
        #expect(try DeliveryReceipts(path: DeliveryReceipts.path(besides: path)).all().isEmpty)
        let outbox = try store.load().outbox
        #expect(outbox.map(\.receivedID) == [42, nil, nil])
        #expect(outbox.map(\.sentBeforeRestart) == [true, true, false])
        try store.delivered([outbox[0]], notificationID: 42, digest: nil, shown: nil, now: t0 + 1)
        try store.delivered([outbox[1]], notificationID: 43, digest: nil, shown: nil, now: t0 + 1)
        let details = try store.history(HistoryQuery(limit: 2)).map(\.detail)
        #expect(
            details == [
                "notification 43, sent again after a restart (it may show twice)",
                "notification 42, received after a restart",
            ])
    }

    func preparedRow(of item: ScheduledItem) -> OutboxRecord {
        OutboxRecord(
            itemID: item.id, group: nil, occurrence: item.fireDate, number: 1, late: false, content: item.content)
    }

    @Test func aPreparedRowBecomesTheStepsRowAndKeepsTheRelaysReceipt() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try ScheduleStore(path: path)
        let once = item(1, "once", at: 10)
        try store.insert(once, now: t0)
        let prepared = try store.prepare([preparedRow(of: once)], now: t0)
        #expect(prepared.map(\.prepared) == [true])
        #expect(try store.load().outbox == prepared)
        // Sent at the due instant; the relay's receipt lands before the step is stored.
        let receipts = try DeliveryReceipts(path: DeliveryReceipts.path(besides: path))
        try receipts.record(notificationID: 7, seqs: [prepared[0].seq])
        var row = prepared[0]
        row.late = true
        row.prepared = false
        var done = once
        done.finished = .lastOccurrence
        let stored = try store.commit(StepRecord(finished: [done], outbox: [row]), now: t0 + 10)
        #expect(stored.map(\.seq) == [prepared[0].seq])
        // The next start moves the receipt onto the row.
        #expect(try store.takeReceipts(at: DeliveryReceipts.path(besides: path)) == 1)
        let outbox = try store.load().outbox
        #expect(outbox.count == 1)
        #expect(outbox[0].prepared == false)
        #expect(outbox[0].late)
        #expect(outbox[0].receivedID == 7)
        // A later preparation leaves it alone.
        _ = try store.prepare([], now: t0 + 11)
        #expect(try store.load().outbox.map(\.seq) == [prepared[0].seq])
    }

    @Test func preparingAgainForgetsTheRowsPreparedBefore() throws {
        let store = try ScheduleStore()
        let first = item(1, "first", at: 10)
        let second = item(2, "second", at: 20)
        try store.insert(first, now: t0)
        try store.insert(second, now: t0)
        _ = try store.prepare([preparedRow(of: first)], now: t0)
        let again = try store.prepare([preparedRow(of: second)], now: t0 + 1)
        #expect(try store.load().outbox == again)
        #expect(again.map(\.itemID) == [2])
    }

    @Test func aPreparedRowWhoseRowWentIsStoredAgainUnderItsSeq() throws {
        let store = try ScheduleStore()
        let once = item(1, "once", at: 10)
        try store.insert(once, now: t0)
        let prepared = try store.prepare([preparedRow(of: once)], now: t0)
        _ = try store.prepare([], now: t0 + 1)
        #expect(try store.load().outbox.isEmpty)
        var row = prepared[0]
        row.prepared = false
        let stored = try store.commit(StepRecord(outbox: [row]), now: t0 + 10)
        #expect(stored == [row])
        #expect(try store.load().outbox == [row])
    }

    @Test func keptPreparedRowsAreOrdinaryOnes() throws {
        let store = try ScheduleStore()
        let once = item(1, "once", at: 10)
        try store.insert(once, now: t0)
        let prepared = try store.prepare([preparedRow(of: once)], now: t0)
        try store.keepPrepared(prepared.map(\.seq))
        _ = try store.prepare([], now: t0 + 1)
        #expect(try store.load().outbox.map(\.prepared) == [false])
    }

    @Test func theRelayStoresAReceiptWhileChimedHoldsItsDatabasesWriteLock() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try ScheduleStore(path: path)
        let rows = try dueNow(1, in: store)
        let receipts = try DeliveryReceipts(path: DeliveryReceipts.path(besides: path))
        // Inside a write transaction of chimed's: a receipt in chimed's own database would wait for its lock
        // (here, on the same thread, until the busy timeout, and then fail).
        try store.write(synced: false) { _ in
            try receipts.record(notificationID: 9, seqs: [rows[0].seq])
        }
        #expect(try receipts.all() == [rows[0].seq: 9])
        // Taken once: the next start finds no receipt left.
        #expect(try store.takeReceipts(at: DeliveryReceipts.path(besides: path)) == 1)
        #expect(try store.takeReceipts(at: DeliveryReceipts.path(besides: path)) == 0)
        #expect(try receipts.all().isEmpty)
        #expect(try store.load().outbox.map(\.receivedID) == [9])
    }

    @Test func theRelayKeepsOnlyItsNewestReceipts() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let receipts = try DeliveryReceipts(path: path, keptLimit: 20)
        let count = 55
        for seq in 1...count { try receipts.record(notificationID: 1, seqs: [UInt64(seq)]) }
        let kept = try receipts.all()
        #expect(kept.count <= 22)
        #expect(kept.count >= 20)
        #expect(kept[UInt64(count)] == 1)
        #expect(kept[1] == nil)
    }

    @Test func aGroupIsReplacedAndRemovedWhole() throws {
        let store = try ScheduleStore()
        let key = GroupKey(owner: "org.example.App", id: "g")
        let a = try groupItem(1, entry: "a")
        let b = try groupItem(2, entry: "b")
        let group = TimelineGroup(id: "g", owner: key.owner, entries: [a.entry, b.entry])
        try store.replaceGroup(
            ReschedulePlan(
                group: group,
                changes: [
                    EntryChange(entryID: "a", kind: .added, before: nil, after: a.fireDate),
                    EntryChange(entryID: "b", kind: .added, before: nil, after: b.fireDate),
                ], upserts: [a, b], removed: []), source: .config, now: t0)
        var state = try store.load()
        #expect(state.groups == [StoredGroup(key: key, settings: GroupSettings(), source: .config)])
        #expect(state.items.map(\.id) == [1, 2])
        var b2 = b
        b2.entry.category = "changed"
        try store.replaceGroup(
            ReschedulePlan(
                group: TimelineGroup(id: "g", owner: key.owner, entries: [b2.entry]),
                changes: [
                    EntryChange(entryID: "b", kind: .changed, before: b.fireDate, after: b.fireDate),
                    EntryChange(entryID: "a", kind: .removed, before: a.fireDate, after: nil),
                ], upserts: [b2], removed: [1]), source: .config, now: t0 + 1)
        state = try store.load()
        #expect(state.items == [b2])
        #expect(
            try store.history(HistoryQuery(group: key)).map(\.event) == [
                .removed, .changed, .scheduled, .scheduled,
            ])
        #expect(try store.removeGroup(key, now: t0 + 2))
        #expect(try !store.removeGroup(key, now: t0 + 3))
        state = try store.load()
        #expect(state.groups.isEmpty && state.items.isEmpty)
    }

    @Test func aRemovedGroupsAuthorizationGoesWithItButTheUsersNoStays() throws {
        let store = try ScheduleStore()
        let owner = "org.example.App"
        let allowed = GroupKey(owner: owner, id: "allowed")
        let offByApp = GroupKey(owner: owner, id: "off-by-app")
        let offByUser = GroupKey(owner: owner, id: "off-by-user")
        for (index, key) in [allowed, offByApp, offByUser].enumerated() {
            try storeGroup(store, owner: owner, key.id, items: 1, firstID: UInt64(index + 1))
        }
        try store.setAuthorization(.allowed, group: allowed, now: t0)
        try store.setAuthorization(.denied, group: offByApp, byApp: true, now: t0)
        try store.setAuthorization(.denied, group: offByUser, now: t0)
        #expect(try store.removeGroup(allowed, now: t0))
        #expect(try store.cancelAll(items: [], groups: [offByApp, offByUser], now: t0) == 2)
        let state = try store.load()
        #expect(state.groups.isEmpty)
        #expect(state.groupAuthorizations == [offByUser: .denied])

        // A group only decided about: its decision is forgotten on its own, the user's "no" again not.
        let ahead = GroupKey(owner: owner, id: "ahead")
        try store.setAuthorization(.allowed, group: ahead, now: t0)
        #expect(try store.forgetAuthorization(of: ahead))
        #expect(try !store.forgetAuthorization(of: ahead))
        #expect(try !store.forgetAuthorization(of: offByUser))
        #expect(try store.load().groupAuthorizations == [offByUser: .denied])
    }

    /// Stores group `id` of `owner` with `count` items due an hour apart from `t0 + 3600`; the first
    /// `finished` of them are finished.
    func storeGroup(
        _ store: ScheduleStore, owner: String, _ id: String, items count: Int, finished: Int = 0,
        enabled: Bool = true, firstID: UInt64
    ) throws {
        var upserts: [ScheduledItem] = []
        for index in 0..<count {
            var item = try groupItem(firstID + UInt64(index), entry: "e\(index)", group: id)
            item.owner = owner
            item.fireDate = t0 + 3600 * Double(index + 1)
            if index < finished { item.finished = .lastOccurrence }
            upserts.append(item)
        }
        var settings = GroupSettings()
        settings.enabled = enabled
        let group = TimelineGroup(id: id, owner: owner, settings: settings, entries: upserts.map(\.entry))
        try store.replaceGroup(
            ReschedulePlan(group: group, changes: [], upserts: upserts, removed: []), source: .api, now: t0)
    }

    @Test func aPageOfGroupsCountsEachGroupsItemsAndEndsAtItsLimitOrItsBudget() throws {
        let store = try ScheduleStore()
        let app = "org.example.App"
        try storeGroup(store, owner: app, "a", items: 3, finished: 1, firstID: 1)
        try storeGroup(store, owner: app, "b", items: 2, enabled: false, firstID: 10)
        try storeGroup(store, owner: app, "c", items: 0, firstID: 20)
        try storeGroup(store, owner: app, "d", items: 5, firstID: 30)
        try storeGroup(store, owner: "org.example.Other", "a", items: 1, firstID: 40)

        let all = try store.groupPage(GroupPageQuery(owner: app, after: nil, limit: 10, itemBudget: 100))
        #expect(all.groups.map(\.key.id) == ["a", "b", "c", "d"])
        #expect(all.groups.map(\.entries) == [3, 2, 0, 5])
        // A finished item is one of the group's, not pending; a disabled group has nothing pending.
        #expect(all.groups.map(\.pending) == [2, 0, 0, 5])
        #expect(all.groups.map(\.next) == [t0 + 7200, nil, nil, t0 + 3600])
        #expect(all.groups.map(\.settings.enabled) == [true, false, true, true])
        #expect(!all.more && all.last == GroupKey(owner: app, id: "d") && all.itemsCounted == 10)

        // By count: two, then the rest after the second.
        let first = try store.groupPage(GroupPageQuery(owner: app, after: nil, limit: 2, itemBudget: 100))
        #expect(first.groups.map(\.key.id) == ["a", "b"] && first.more)
        let rest = try store.groupPage(GroupPageQuery(owner: app, after: first.last, limit: 2, itemBudget: 100))
        #expect(rest.groups.map(\.key.id) == ["c", "d"] && !rest.more)
        // By items counted: the page ends after the group that reaches the budget, and holds one at least.
        let counted = try store.groupPage(GroupPageQuery(owner: app, after: nil, limit: 10, itemBudget: 4))
        #expect(counted.groups.map(\.key.id) == ["a", "b"] && counted.more && counted.itemsCounted == 5)
        let one = try store.groupPage(
            GroupPageQuery(owner: app, after: GroupKey(owner: app, id: "c"), limit: 10, itemBudget: 1))
        #expect(one.groups.map(\.key.id) == ["d"] && !one.more)
        // Everyone's, by owner then id.
        let everyone = try store.groupPage(GroupPageQuery(owner: nil, after: nil, limit: 10, itemBudget: 100))
        #expect(
            everyone.groups.map(\.key.description) == [
                "\(app)/a", "\(app)/b", "\(app)/c", "\(app)/d", "org.example.Other/a",
            ])
    }

    @Test func categoriesArePerOwnerAndReplacedWhole() throws {
        let store = try ScheduleStore()
        let pizza = ActionCategory(
            id: "pizza",
            actions: [
                CategoryAction(id: "stop-repeat", title: "Stop Repeat", options: [.destructive]),
                CategoryAction(id: "order", title: "Order", options: [.foreground], command: ["xdg-open", "x"]),
            ], defaultAction: "order", minimalActions: ["order"])
        try store.setCategories([pizza], owner: "org.example.Pizza")
        try store.setCategories([ActionCategory(id: "q", actions: [CategoryAction(id: "a", title: "A")])], owner: "b")
        #expect(
            try store.load().categories == [
                "org.example.Pizza": [pizza],
                "b": [ActionCategory(id: "q", actions: [CategoryAction(id: "a", title: "A")])],
            ])
        try store.setCategories([], owner: "b")
        #expect(try store.load().categories == ["org.example.Pizza": [pizza]])
    }

    @Test func actionsWaitForTheirAppAndAreHandedOverOnce() throws {
        let store = try ScheduleStore()
        let first = try store.queue(
            PendingAction(
                owner: "app", itemID: 3, group: "g", entryID: "e", key: "open", userInfo: ["k": "v"], date: t0))
        _ = try store.queue(
            PendingAction(owner: "other", itemID: 4, group: nil, entryID: nil, key: "x", userInfo: [:], date: t0))
        let second = try store.queue(
            PendingAction(owner: "app", itemID: 5, group: nil, entryID: nil, key: "later", userInfo: [:], date: t0 + 1))
        #expect(try store.takeActions(owner: "app", now: t0 + 10).actions == [first, second])
        #expect(try store.takeActions(owner: "app", now: t0 + 10).actions.isEmpty)
        #expect(try store.takeActions(owner: "other", now: t0 + 10).actions.map(\.key) == ["x"])
    }

    /// A kept action older than `keptActionLifetime` is not handed over: a week later it answers nothing. An
    /// app that never asks loses its old ones when any app's action is kept.
    @Test func keptActionsExpire() throws {
        let store = try ScheduleStore()
        let lifetime = ScheduleStore.keptActionLifetime
        _ = try store.queue(
            PendingAction(owner: "app", itemID: 1, group: nil, entryID: nil, key: "old", userInfo: [:], date: t0))
        let recent = try store.queue(
            PendingAction(
                owner: "app", itemID: 2, group: nil, entryID: nil, key: "recent", userInfo: [:], date: t0 + lifetime))
        #expect(try store.takeActions(owner: "app", now: t0 + lifetime + 1).actions == [recent])
        _ = try store.queue(
            PendingAction(owner: "away", itemID: 3, group: nil, entryID: nil, key: "old", userInfo: [:], date: t0))
        _ = try store.queue(
            PendingAction(
                owner: "app", itemID: 4, group: nil, entryID: nil, key: "new", userInfo: [:], date: t0 + lifetime + 1))
        #expect(try store.takeActions(owner: "away", now: t0).actions.isEmpty, "forgotten when the later one was kept")
    }

    /// Actions are handed over in bounded batches, oldest first, so that one reply stays small: what does not
    /// fit waits for the next call, and nothing is lost.
    @Test func actionsAreHandedOverInBatchesOfAtMostTheBytesAsked() throws {
        let store = try ScheduleStore()
        let big = String(repeating: "x", count: 1000)
        let queued = try (0..<3).map { index in
            try store.queue(
                PendingAction(
                    owner: "app", itemID: UInt64(index + 1), group: nil, entryID: nil, key: "k\(index)",
                    userInfo: ["text": .string(big)], date: t0 + Double(index)))
        }
        let first = try store.takeActions(owner: "app", maximumBytes: 2600, now: t0 + 10)
        #expect(first.actions == Array(queued.prefix(2)))
        #expect(first.more)
        let second = try store.takeActions(owner: "app", maximumBytes: 10, now: t0 + 10)
        #expect(second.actions == [queued[2]], "one at least, however small the batch")
        #expect(!second.more)
        #expect(try store.takeActions(owner: "app", now: t0 + 10).actions.isEmpty)
    }

    @Test func theDatabaseKeepsEverythingAcrossReopening() throws {
        let path = Self.temporaryPath()
        do {
            let store = try ScheduleStore(path: path)
            try store.insert(item(5, "kept", at: 60), now: t0)
            try store.insert(item(6, "gone", at: 61), now: t0)
            _ = try store.cancel(6, now: t0)
        }
        let reopened = try ScheduleStore(path: path)
        let state = try reopened.load()
        #expect(state.items == [item(5, "kept", at: 60)])
        #expect(state.largestItemID == 6)
    }

    /// A database written by the previous version (schema v2: items on their own, history without
    /// groups) opens, and keeps every pending item and its history.
    @Test func aVersionTwoDatabaseIsMigratedWithNothingLost() throws {
        let path = Self.temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        do {
            let old = try DatabaseQueue(path: path)
            try old.write { db in
                // The schema and rows exactly as the v2 store wrote them.
                try db.execute(
                    sql: """
                        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                        INSERT INTO grdb_migrations VALUES ('v1: items and history'), ('v2: repeating items');
                        CREATE TABLE item (id INTEGER PRIMARY KEY, fireAtUsec INTEGER NOT NULL, content TEXT NOT NULL,
                            state TEXT NOT NULL, createdUsec INTEGER NOT NULL, notificationID INTEGER, recurrence TEXT);
                        CREATE INDEX item_pending ON item(state, fireAtUsec);
                        CREATE TABLE history (seq INTEGER PRIMARY KEY AUTOINCREMENT, itemID INTEGER NOT NULL,
                            atUsec INTEGER NOT NULL, event TEXT NOT NULL, detail TEXT);
                        INSERT INTO item VALUES (1, 1800000060000000,
                            '{"appName":"app","summary":"pending one","body":"b","icon":"","expireTimeout":-1,"actions":[]}',
                            'pending', 1800000000000000, NULL, NULL);
                        INSERT INTO item VALUES (2, 1800000000000000,
                            '{"appName":"","summary":"shown one","body":"","icon":"","expireTimeout":-1,"actions":[]}',
                            'delivered', 1800000000000000, 4, NULL);
                        INSERT INTO history (itemID, atUsec, event, detail) VALUES
                            (1, 1800000000000000, 'scheduled', 'due 1800000060000000'),
                            (2, 1800000000000000, 'delivered', 'notification 4');
                        """)
            }
        }
        let store = try ScheduleStore(path: path)
        let state = try store.load()
        let entries = try store.entries(of: state.items.map(\.id))
        #expect(
            state.items.map { entries[$0.id]?.content.base }
                == [NotificationContent(appName: "app", summary: "pending one", body: "b")])
        #expect(state.items.map(\.fireDate) == [t0 + 60])
        #expect(state.largestItemID == 2)
        let history = try store.history(HistoryQuery())
        #expect(history.map(\.summary) == ["shown one", "pending one"])
        // A record made now takes the migrated item's summary.
        #expect(try store.cancel(1, now: t0 + 30))
        let latest = try store.history(HistoryQuery()).first
        #expect(latest?.event == .cancelled)
        #expect(latest?.summary == "pending one")
    }

    /// A commit reaches the disk before the store returns: the log is synced on every commit, not only
    /// at checkpoints. A scheduler step's commit (not synced, see `commit(_:now:)`) leaves it so.
    @Test func everyCommitIsSyncedToTheDisk() throws {
        let store = try ScheduleStore(path: Self.temporaryPath())
        // The setting belongs to the connection that commits.
        func synchronous() throws -> Int? {
            try store.writer.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
        }
        #expect(try synchronous() == 2)  // FULL
        #expect(try store.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
        #expect(try dueNow(2, in: store).count == 2)
        #expect(try synchronous() == 2)
    }

    @Test func aFileThatIsNotADatabaseIsMovedAsideKeptAndAnEmptyStoreOpens() throws {
        let path = Self.temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let garbage = Data("this is not sqlite".utf8) + Data(repeating: 0, count: 4096)
        let log = Data("nor is this a log".utf8)
        try garbage.write(to: URL(fileURLWithPath: path))
        try log.write(to: URL(fileURLWithPath: path + "-wal"))
        let store = try ScheduleStore(path: path)
        let moved = try #require(store.movedAside)
        let stamp = String(moved.path.dropFirst((path + ".corrupt-").count))
        #expect(moved.path.hasPrefix(path + ".corrupt-"))
        #expect(stamp.wholeMatch(of: /[0-9]{8}T[0-9]{6}Z/) != nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: moved.path)) == garbage)
        #expect(try Data(contentsOf: URL(fileURLWithPath: moved.path + "-wal")) == log)
        #expect(try store.load().items.isEmpty)
        try store.insert(item(1, "after", at: 60), now: t0)
        let reopened = try ScheduleStore(path: path)
        #expect(reopened.movedAside == nil)
        #expect(try reopened.load().items.map(\.id) == [1])
    }

    @Test func anUnwritableStateDirectoryIsAClearError() {
        #expect {
            try ScheduleStore(path: "/proc/chime-cannot-be-here/chime.sqlite")
        } throws: { error in
            (error as? StoreError)?.message.contains("cannot create the state directory") == true
        }
    }
}
