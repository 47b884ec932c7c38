import ChimeKit

/// Seed 004's repeating "Pizza Time" on the desktop: a calendar trigger that repeats every minute at the
/// given second, in the category `pizza.reminder.category` with a "Stop Repeat" action, and an end date kept
/// in `userInfo`. As the tutorial does, the app cleans expired repeats when it starts and when the user
/// responds, and "Stop Repeat" removes the request. The code is the tutorial's, without UIKit.
///
/// Usage: `PizzaTime [--schedule] [--second S] [--end-after SECONDS] [--listen SECONDS] [--app-id ID]`.
/// Every start cleans; `--schedule` adds the reminder; `--listen` stays running to answer responses.
extension UNUserNotificationCenter {
    /// Removes the pending requests whose `userInfo["endDate"]` has passed; returns their identifiers.
    func cleanRepeatingNotifications() async -> [String] {
        var cleaned: [String] = []
        for request in await pendingNotificationRequests() {
            if let endDate = request.content.userInfo["endDate"] as? Date, Date() >= endDate {
                removePendingNotificationRequests(withIdentifiers: [request.identifier])
                cleaned.append(request.identifier)
            }
        }
        for identifier in cleaned { print("cleaned \(identifier)") }
        return cleaned
    }
}

final class PizzaDelegate: NSObject, UNUserNotificationCenterDelegate, @unchecked Sendable {
    func setCategories() {
        let clearRepeatAction = UNNotificationAction(
            identifier: "clear.repeat.action", title: "Stop Repeat", options: [])
        let pizzaCategory = UNNotificationCategory(
            identifier: "pizza.reminder.category", actions: [clearRepeatAction], intentIdentifiers: [], options: [])
        UNUserNotificationCenter.current().setNotificationCategories([pizzaCategory])
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        _ = await center.cleanRepeatingNotifications()
        print("Did recieve response: \(response.actionIdentifier) on \(response.notification.request.identifier)")
        if response.actionIdentifier == "clear.repeat.action" {
            center.removePendingNotificationRequests(withIdentifiers: [response.notification.request.identifier])
            _ = await center.pendingNotificationRequests()  // after the removal
            print("stopped \(response.notification.request.identifier)")
        }
    }
}

@main
struct PizzaTime {
    static func main() async {
        var options: [String: String] = [:]
        var schedule = false
        var arguments = CommandLine.arguments.dropFirst()
        while let flag = arguments.popFirst() {
            if flag == "--schedule" {
                schedule = true
                continue
            }
            guard ["--app-id", "--second", "--end-after", "--listen"].contains(flag), let value = arguments.popFirst()
            else {
                print(
                    "usage: PizzaTime [--schedule] [--second S] [--end-after SECONDS] [--listen SECONDS] [--app-id ID]")
                exit(2)
            }
            options[flag] = value
        }
        guard let second = Int(options["--second"] ?? "0"), (0...59).contains(second),
            let endAfter = Double(options["--end-after"] ?? "60"), endAfter > 0,
            let listen = Double(options["--listen"] ?? "0"), listen >= 0
        else {
            print("--second takes 0 to 59, --end-after seconds above 0, --listen seconds, 0 or more")
            exit(2)
        }
        await LocalNotifications.configure(.init(appID: options["--app-id"] ?? "io.chime.examples.PizzaTime"))
        let center = UNUserNotificationCenter.current()
        let delegate = PizzaDelegate()
        center.delegate = delegate
        delegate.setCategories()
        _ = await center.cleanRepeatingNotifications()

        if schedule {
            guard (try? await center.requestAuthorization(options: [.alert, .sound])) == true else {
                print("notification not granted")
                exit(1)
            }
            let content = UNMutableNotificationContent()
            content.title = "Pizza Time!!"
            content.body = "Monday is Pizza Day"
            content.categoryIdentifier = "pizza.reminder.category"
            content.userInfo["endDate"] = Date(timeIntervalSinceNow: endAfter)
            var dateComponents = DateComponents()
            dateComponents.second = second
            let trigger = UNCalendarNotificationTrigger(dateMatching: dateComponents, repeats: true)
            let request = UNNotificationRequest(identifier: "pizza.reminder", content: content, trigger: trigger)
            do {
                try await center.add(request)
                print("added notification:\(request.identifier)")
            } catch {
                print("error in pizza reminder: \(error.localizedDescription)")
                exit(1)
            }
        }
        let pending = await center.pendingNotificationRequests().map(\.identifier)
        print("pending: \(pending.joined(separator: " "))")
        if listen > 0 { try? await Task.sleep(for: .seconds(listen)) }
        withExtendedLifetime(delegate) {}
    }
}

/// Writes a line at once (Swift's `print` buffers when the output is a file, and the tests read it).
func print(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
