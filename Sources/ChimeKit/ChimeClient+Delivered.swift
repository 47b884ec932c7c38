import ChimeProtocol
import DBusKit
import Foundation

/// This app's notifications that are on the server now: listed and closed.
extension ChimeClient {
    /// This app's notifications that are shown now (delivered and not yet closed), newest first; at most
    /// the newest 256.
    public func delivered() async throws(ChimeError) -> [DeliveredNotification] {
        try await records("ListDelivered", [WireRecord().value]) { (f) throws(DBusError) in
            try DeliveredNotification(f)
        }
    }

    /// Closes these of this app's notifications (their `notificationID`s); ids that are no longer shown
    /// are ignored, another app's are refused. The app hears a `ClosedEvent` for each as the server closes it.
    public func closeDelivered(_ ids: [UInt32]) async throws(ChimeError) {
        var options = WireRecord()
        options.set("notifications", .array(element: .uint32, ids.map(DBusValue.uint32)))
        _ = try await call("CloseDelivered", [options.value])
    }

    /// Closes all of this app's notifications that are shown now.
    public func closeAllDelivered() async throws(ChimeError) {
        var options = WireRecord()
        options.set("all", true)
        _ = try await call("CloseDelivered", [options.value])
    }
}
