import ChimeCore
import Foundation

/// The sound chimed plays itself for a notification the server showed, when the server plays none.
/// Pure: the decision is `DeliverySound.for(_:serverCapabilities:serverPaused:)`; `SoundPlayer` plays it.
///
/// A server that advertises the `sound` capability gets the `sound-name`, `sound-file` and
/// `suppress-sound` hints and plays the sound itself, so chimed plays nothing; the others (dunst, mako,
/// xfce4-notifyd, Plasma: docs/servers.md) play none, so chimed plays it through libcanberra.
struct DeliverySound: Hashable, Sendable {
    enum Source: Hashable, Sendable {
        /// A name of the freedesktop sound theme (`event.id`), such as `message-new-instant`.
        case themed(String)
        /// A sound file by its absolute path, as chimed sees it (the `sound-file` hint).
        case file(String)
    }

    var source: Source
    /// A critical notification's sound: it plays while the server is paused, and stops a lesser one.
    var critical: Bool
    /// The loudness asked for, 0 < volume < 1, from the `x-chime-sound-volume` hint (ChimeKit's
    /// `criticalSoundNamed(_:withAudioVolume:)`); nil: as loud as the sound server plays event sounds.
    var volume: Double? = nil

    /// The hint an app asks for a quieter sound with: a double from 0 (no sound) to 1.
    static let volumeHint = "x-chime-sound-volume"

    /// The theme's sound for a new message: ChimeKit's `.default`, and what a theme name the theme lacks
    /// falls back to.
    static let defaultName = "message-new-instant"
    /// The theme's alarm, for a critical notification: the Sound Naming Specification's "the alarm clock
    /// elapsed" is what a due reminder that must be heard is (ChimeKit's `.defaultCritical`, a calendar's
    /// `ACTION:AUDIO`), where `dialog-warning` means a warning dialog appeared.
    static let defaultCriticalName = "alarm-clock-elapsed"

    /// The theme sound to play when `source`'s name is not in the theme.
    var fallback: DeliverySound? {
        let name = critical ? Self.defaultCriticalName : Self.defaultName
        guard source != .themed(name) else { return nil }
        return DeliverySound(source: .themed(name), critical: critical, volume: volume)
    }

    /// What chimed plays for `content` as shown by a server of `serverCapabilities` that said it is paused
    /// (`serverPaused`, nil when it did not say); nil: nothing.
    ///
    /// Nothing for a server with the `sound` capability (it plays the hints itself), for the
    /// `suppress-sound` hint, for content without a sound, or, unless the notification is critical, while
    /// the server is paused (its do-not-disturb): a critical notification is an alarm, heard as GNOME and
    /// iOS let critical ones through. Otherwise the `sound-file` hint's file when it is an absolute path,
    /// else the content's sound (the `sound-name` hint) when it is a theme name.
    static func `for`(_ content: NotificationContent, serverCapabilities: [String], serverPaused: Bool?)
        -> DeliverySound?
    {
        if serverCapabilities.contains("sound") { return nil }
        if case .boolean(true)? = content.hints["suppress-sound"] { return nil }
        let critical = content.urgency == .critical
        if serverPaused == true, !critical { return nil }
        var volume: Double?
        if case .double(let asked)? = content.hints[volumeHint] {
            // Not a number, or 1 and more: the full volume; 0 and less: no sound.
            if asked <= 0 { return nil }
            if asked.isFinite, asked < 1 { volume = asked }
        }
        if case .string(let path)? = content.hints["sound-file"], isFilePath(path) {
            return DeliverySound(source: .file(path), critical: critical, volume: volume)
        }
        if let name = content.sound, isThemeName(name) {
            return DeliverySound(source: .themed(name), critical: critical, volume: volume)
        }
        return nil
    }

    /// libcanberra's `canberra.volume` for `volume`: decibels, 20 log10 of the amplitude; nil at full volume.
    static func decibels(_ volume: Double?) -> String? {
        guard let volume, volume > 0, volume < 1 else { return nil }
        return String((20 * log10(volume) * 100).rounded() / 100)
    }

    /// A theme sound's name: letters, digits, `-`, `_` and `.`, not starting with a dot. libcanberra makes
    /// a file path of it, so a `/` or `..` would reach outside the theme's folders.
    static func isThemeName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255 && !name.hasPrefix(".")
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F || byte == 0x2E
            }
    }

    /// An absolute path without a NUL (which C would cut it at).
    static func isFilePath(_ path: String) -> Bool {
        path.hasPrefix("/") && !path.utf8.contains(0) && path.utf8.count <= 4096
    }
}
