import ChimeCore
import Foundation

// UserNotifications' content to chimed's and back: what the desktop makes of each field (docs/chimekit.md).

extension UNNotificationContent {
    /// The hint that carries `threadIdentifier` (no server groups by it; it comes back to the app).
    static let threadHint = "x-chime-thread-id"
    /// The hint that carries `targetContentIdentifier`.
    static let targetHint = "x-chime-target-content-id"
    /// The hint that carries a critical sound's volume (chimed plays the sound at it).
    static let volumeHint = "x-chime-sound-volume"
    /// The hint that carries `filterCriteria`.
    static let filterHint = "x-chime-filter-criteria"

    /// The content as chimed takes it. An empty title makes the body the summary, as a server has no
    /// notification without one.
    func wire() throws(UNError) -> ChimeCore.NotificationContent {
        let f = storage
        var content = ChimeCore.NotificationContent(
            summary: f.title.isEmpty ? f.body : f.title, body: f.title.isEmpty ? "" : f.body)
        guard !content.summary.isEmpty else {
            throw UNError(.notificationInvalidNoContent, "the notification has neither a title nor a body")
        }
        if !f.subtitle.isEmpty { content.subtitle = f.subtitle }
        content.appName = f.appName
        content.icon = f.icon
        if let sound = f.sound {
            if sound.isFile {
                content.hints["sound-file"] = .string(sound.name.rawValue)
            } else {
                content.sound = sound.name.rawValue
            }
            if sound.isCritical { content.urgency = .critical }
            if let volume = sound.audioVolume { content.hints[Self.volumeHint] = .double(Double(volume)) }
        } else {
            content.hints["suppress-sound"] = .boolean(true)
        }
        switch f.interruptionLevel {
        case .passive: content.urgency = .low
        case .critical: content.urgency = .critical
        case .timeSensitive, .active: break
        }
        if let badge = f.badge {
            guard let count = Int(exactly: badge.doubleValue), count >= 0, count <= Int(Int32.max) else {
                throw UNError(.badgeInputInvalid, "the badge \(badge) is not a whole number from 0 to \(Int32.max)")
            }
            content.badge = count
        }
        if !f.categoryIdentifier.isEmpty { content.category = f.categoryIdentifier }
        if !f.threadIdentifier.isEmpty { content.hints[Self.threadHint] = .string(f.threadIdentifier) }
        if let target = f.targetContentIdentifier { content.hints[Self.targetHint] = .string(target) }
        if let criteria = f.filterCriteria { content.hints[Self.filterHint] = .string(criteria) }
        if let image = f.attachments.first(where: \.isImage) {
            content.hints["image-path"] = .string(image.url.absoluteString)
        }
        content.userInfo = try UserInfoCoding.encode(f.userInfo)
        return content
    }

    /// Content as chimed holds it, in UserNotifications' terms.
    static func from(_ content: ChimeCore.NotificationContent) -> UNNotificationContent {
        var f = Fields()
        f.title = content.summary
        f.subtitle = content.subtitle ?? ""
        f.body = content.body
        f.appName = content.appName
        f.icon = content.icon
        var volume: Float?
        if case .double(let asked)? = content.hints[volumeHint] { volume = Float(asked) }
        if case .string(let file)? = content.hints["sound-file"] {
            f.sound = UNNotificationSound(
                name: UNNotificationSoundName(file), isCritical: content.urgency == .critical, audioVolume: volume)
        } else if let name = content.sound {
            f.sound =
                name == UNNotificationSound.default.name.rawValue && content.urgency != .critical
                ? .default
                : UNNotificationSound(
                    name: UNNotificationSoundName(name), isCritical: content.urgency == .critical, audioVolume: volume)
        }
        if content.urgency == .low { f.interruptionLevel = .passive }
        if content.urgency == .critical { f.interruptionLevel = .critical }
        if let badge = content.badge { f.badge = NSNumber(value: badge) }
        f.categoryIdentifier = content.category ?? ""
        if case .string(let thread)? = content.hints[threadHint] { f.threadIdentifier = thread }
        if case .string(let target)? = content.hints[targetHint] { f.targetContentIdentifier = target }
        if case .string(let criteria)? = content.hints[filterHint] { f.filterCriteria = criteria }
        if case .string(let image)? = content.hints["image-path"], let url = URL(string: image), url.isFileURL {
            f.attachments = [UNNotificationAttachment(restoring: "image", url: url)]
        }
        f.userInfo = UserInfoCoding.decode(content.userInfo)
        return UNNotificationContent(fields: f)
    }
}

/// userInfo's property-list values to chimed's `UserInfoValue`s and back.
enum UserInfoCoding {
    static func encode(_ info: [AnyHashable: Any]) throws(UNError) -> [String: UserInfoValue] {
        var result: [String: UserInfoValue] = [:]
        for (key, value) in info {
            guard let name = key.base as? String else {
                throw UNError(.contentProvidingInvalid, "userInfo key \(key) is not a string; use string keys")
            }
            result[name] = try encode(value, at: name)
        }
        return result
    }

    static func encode(_ value: Any, at path: String) throws(UNError) -> UserInfoValue {
        switch value {
        case let v as String: return .string(v)
        case let v as Bool: return .bool(v)
        case let v as Int: return .integer(Int64(v))
        case let v as Int64: return .integer(v)
        case let v as Int32: return .integer(Int64(v))
        case let v as UInt32: return .integer(Int64(v))
        case let v as Double:
            guard v.isFinite else { throw UNError(.contentProvidingInvalid, "userInfo[\(path)] is \(v), not finite") }
            return .double(v)
        case let v as Float: return try encode(Double(v), at: path)
        case let v as NSNumber: return try number(v, at: path)
        case let v as Date: return .date(v)
        case let v as Data: return .data(v)
        case let v as URL: return .string(v.absoluteString)
        case let v as UUID: return .string(v.uuidString)
        case let v as [Any]:
            var items: [UserInfoValue] = []
            for (i, item) in v.enumerated() { items.append(try encode(item, at: "\(path)[\(i)]")) }
            return .array(items)
        case let v as [AnyHashable: Any]:
            var items: [String: UserInfoValue] = [:]
            for (key, item) in v {
                guard let name = key.base as? String else {
                    throw UNError(.contentProvidingInvalid, "userInfo[\(path)] has the key \(key), not a string")
                }
                items[name] = try encode(item, at: "\(path).\(name)")
            }
            return .dictionary(items)
        default:
            throw UNError(
                .contentProvidingInvalid,
                "userInfo[\(path)] is a \(type(of: value)); userInfo holds strings, numbers, booleans, dates, data, "
                    + "and arrays and dictionaries of them")
        }
    }

    static func number(_ n: NSNumber, at path: String) throws(UNError) -> UserInfoValue {
        if let i = Int64(exactly: n.doubleValue), n.doubleValue.rounded() == n.doubleValue,
            !String(describing: n).contains(".")
        {
            return .integer(i)
        }
        return try encode(n.doubleValue, at: path)
    }

    static func decode(_ info: [String: UserInfoValue]) -> [AnyHashable: Any] {
        var result: [AnyHashable: Any] = [:]
        for (key, value) in info { result[key] = decode(value) }
        return result
    }

    static func decode(_ value: UserInfoValue) -> Any {
        switch value {
        case .string(let v): v
        case .integer(let v): Int(exactly: v) ?? v
        case .double(let v): v
        case .bool(let v): v
        case .date(let v): v
        case .data(let v): v
        case .array(let v): v.map(decode)
        case .dictionary(let v): v.mapValues(decode) as [String: Any]
        }
    }
}
