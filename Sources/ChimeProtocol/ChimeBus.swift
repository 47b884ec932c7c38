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

    /// The most bytes of arguments a call to chimed may carry, as measured on the wire before anything of it
    /// is decoded (a larger call gets `org.freedesktop.DBus.Error.LimitsExceeded`): `Schedule` takes one
    /// item (64 KiB of content, a pool of 1 MiB, its trigger), `Reschedule` a whole group (within an app's
    /// 32 MiB), `RegisterCategories` 100 categories, every other method a few options.
    public static let maximumCallBytes = 64 << 10
    public static let maximumScheduleBytes = 2 << 20
    public static let maximumRescheduleBytes = 32 << 20
    public static let maximumCategoriesBytes = 1 << 20
    /// The most bytes an app's answer to `MakeContent` may carry (one item's content is at most 64 KiB); a
    /// larger answer is not decoded, and the entry's fallback content is shown.
    public static let maximumContentReplyBytes = 256 << 10
    /// The most bytes a reply of chimed's carries, far below the 128 MiB a D-Bus message may: `ListPending`
    /// and `History` answer in pages (`next-page`, `after`), and no other reply comes near it.
    public static let maximumReplyBytes = 4 << 20
    /// The most bytes chimed holds of calls waiting for their turn: from one connection (a `Reschedule` and
    /// a few small calls) and from all together.
    public static let maximumWaitingBytesPerConnection = 40 << 20
    public static let maximumWaitingBytes = 128 << 20

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
