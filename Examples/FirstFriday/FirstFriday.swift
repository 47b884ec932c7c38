import ChimeKit

@main
struct FirstFriday {
    static func main() async throws {
        await LocalNotifications.configure(.init(appID: "org.example.Pizza"))
        let group = try await LocalNotifications.schedule(groupIdentifier: "first-friday") {
            EveryMonth(forMonths: 12, starting: .thisMonth).first(.friday).at(hour: 20, minute: 15)
                .schedule(title: "First Friday", body: "Pizza and a film")
        }
        print("scheduled group \(group.groupIdentifier)")
    }
}
