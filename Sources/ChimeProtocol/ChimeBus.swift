import ChimeCore
import DBusKit
import Foundation

/// The fixed names of Chime's D-Bus API, shared by chimed and its clients.
public enum ChimeBus {
    /// The well-known name chimed owns.
    public static let name = "io.chime.Chime1"
    public static let path: DBusObjectPath = "/io/chime/Chime1"
    public static let interface = "io.chime.Chime1"
    /// The version of the API in this build (the `Version` property).
    public static let version = "0.4.0"
    /// The most items `ListPending` returns with their content (the soonest): at most 64 KiB of content and
    /// 17 KiB of trigger each, 256 items stay within about 20 MiB.
    public static let maximumPendingWithContent = 256

    /// Error names chimed answers with; each comes with a message saying what to change.
    public enum ErrorName {
        /// An argument has the wrong shape or value.
        public static let invalidArgument = "io.chime.Chime1.Error.InvalidArgument"
        /// A time that cannot be used: `at` or `until`, an item due after its end, a time span.
        public static let invalidTime = "io.chime.Chime1.Error.InvalidTime"
        /// A repeat rule (`every`, `rrule`, `on-calendar`) that cannot be read, or that never fires.
        public static let invalidRule = "io.chime.Chime1.Error.InvalidRule"
        /// No such item.
        public static let notFound = "io.chime.Chime1.Error.NotFound"
        /// A limit of one app: its items, their bytes, or how fast it calls (chime.toml `[limits]`).
        public static let limitsExceeded = "io.chime.Chime1.Error.LimitsExceeded"
        /// The request cannot be carried out in chimed's present state (e.g. the group comes from a file).
        public static let conflict = "io.chime.Chime1.Error.Conflict"
        /// chimed could not store the change; nothing was changed.
        public static let storage = "io.chime.Chime1.Error.Storage"
        /// The caller may not do this: another app's item or group, or a permission the user withheld.
        public static let permissionDenied = "io.chime.Chime1.Error.PermissionDenied"
    }
}

/// The interface an app implements to make an entry's content when it fires (a `callback` content
/// source): `MakeContent(s group, s entry, x fire_time, u number) → a{sv} content`, with the keys of
/// `ContentWire`, at `/io/chime/ContentProvider1` on the app's bus name.
public enum ContentProviderBus {
    public static let path: DBusObjectPath = "/io/chime/ContentProvider1"
    public static let interface = "io.chime.ContentProvider1"
    /// `MakeContent(s group, s entry, x fire_time, u number) → a{sv} content`: the content keys of `Schedule`,
    /// or `present` (b) false for "not this time".
    public static let makeContent = "MakeContent"
    public static let makeContentInputs = [
        DBusArgument("group", .string), DBusArgument("entry", .string), DBusArgument("fire_time", .int64),
        DBusArgument("number", .uint32),
    ]
}
