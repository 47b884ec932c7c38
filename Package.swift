// swift-tools-version:6.1
import PackageDescription

// The integration tests' controls of a running chimed (a clock offset read on SIGUSR2, another
// localtime file), in debug builds only: the release binary that is installed has none.
let testHooks = SwiftSetting.define("CHIME_TEST_HOOKS", .when(configuration: .debug))

let package = Package(
    name: "Chime",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "chimed", targets: ["chimed"]),
        .executable(name: "chime", targets: ["chime"]),
        .executable(name: "chime-relay", targets: ["chime-relay"]),
        .library(name: "ChimeKit", targets: ["ChimeKit"]),
        .library(name: "DBusKit", targets: ["DBusKit"]),
        .executable(name: "DailyQuote", targets: ["DailyQuote"]),
        .executable(name: "FirstFriday", targets: ["FirstFriday"]),
        .executable(name: "NotificationManager", targets: ["NotificationManager"]),
        .executable(name: "PizzaTime", targets: ["PizzaTime"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // libcanberra, which plays event sounds from the freedesktop sound theme (SoundPlayer). No pkgConfig:
        // canberra.h is in /usr/include, and its .pc file's only flag, -D_REENTRANT, is one SwiftPM refuses
        // with a warning.
        .systemLibrary(
            name: "CCanberra",
            providers: [.apt(["libcanberra-dev"])]
        ),
        // Linux interfaces Glibc's Swift module lacks (timerfd) or spells as untyped macros (inotify).
        .target(name: "CLinux"),
        .target(
            name: "DBusKit",
            dependencies: ["CDBus"]
        ),
        // The notification relay's frames and receipts, without Foundation or GRDB.
        .target(
            name: "ChimeRelay",
            dependencies: ["DBusKit", .product(name: "GRDBSQLite", package: "GRDB.swift")]
        ),
        .executableTarget(
            name: "chime-relay",
            dependencies: ["ChimeRelay", "CLinux", "DBusKit"]
        ),
        .target(
            name: "SystemdKit",
            dependencies: ["CSystemd", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "ChimeCore",
            dependencies: [.product(name: "HeapModule", package: "swift-collections")]
        ),
        .target(
            name: "ChimeStore",
            dependencies: [
                "ChimeCore", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "ChimeProtocol",
            dependencies: ["ChimeCore", "DBusKit"]
        ),
        .target(
            name: "ChimeConfig",
            dependencies: [
                "ChimeCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]
        ),
        .target(
            name: "ChimeDaemon",
            dependencies: [
                "CCanberra", "ChimeConfig", "ChimeCore", "ChimeProtocol", "ChimeRelay", "ChimeStore", "CLinux",
                "DBusKit", "SystemdKit",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: [testHooks]
        ),
        .target(
            name: "ChimeKit",
            dependencies: ["ChimeCore", "ChimeProtocol", "DBusKit"]
        ),
        // chimed's command line, in both programs: the installed chimed is a link to chime.
        .target(
            name: "ChimedCommand",
            dependencies: [
                "ChimeConfig", "ChimeDaemon", "ChimeRelay", "CLinux",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: [testHooks]
        ),
        .executableTarget(name: "chimed", dependencies: ["ChimedCommand", "CLinux"]),
        // Run: swift run -c release --scratch-path .build-release time-engine-benchmark
        .executableTarget(
            name: "time-engine-benchmark",
            dependencies: ["ChimeCore"],
            path: "Benchmarks/TimeEngine"
        ),
        // The seeds' "Daily Quote" case study on ChimeKit: swift run DailyQuote --help
        .executableTarget(
            name: "DailyQuote",
            dependencies: ["ChimeKit", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/DailyQuote"
        ),
        // Whole-system figures: bash scripts/bench [--quick]
        .executableTarget(
            name: "chime-bench",
            dependencies: [
                "ChimeKit", "ChimeProtocol", "DBusKit", "TestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/System"
        ),
        // README's ChimeKit example: swift run FirstFriday
        .executableTarget(name: "FirstFriday", dependencies: ["ChimeKit"], path: "Examples/FirstFriday"),
        .executableTarget(
            name: "NotificationManager", dependencies: ["ChimeKit"], path: "Examples/NotificationManager"),
        .executableTarget(name: "PizzaTime", dependencies: ["ChimeKit"], path: "Examples/PizzaTime"),
        .executableTarget(
            name: "chime",
            dependencies: [
                "ChimeConfig", "ChimeKit", "ChimedCommand", "CLinux",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "DBusKitTests", dependencies: ["DBusKit", "TestSupport"]),
        .testTarget(
            name: "ChimeCoreTests",
            dependencies: ["ChimeCore"],
            exclude: [
                "WallClock/oracle_wallclock.py", "DateBuilder/oracle_datebuilder.py", "Phrase/oracle_phrasedoc.py",
                "Phrase/oracle_phrase_corpus.py", "oracle_zones.py",
                "RRule/oracle_rrule.py",
                // Calendar files read by the tests from their folder.
                "Fixtures",
            ]
        ),
        .testTarget(name: "SystemdKitTests", dependencies: ["SystemdKit"]),
        .testTarget(
            name: "ChimeStoreTests", dependencies: ["ChimeRelay", "ChimeStore"], exclude: ["Databases/v10.sql"]),
        .testTarget(name: "ChimeConfigTests", dependencies: ["ChimeConfig"]),
        .testTarget(
            name: "ChimeDaemonTests",
            dependencies: [
                "ChimeDaemon", "ChimeRelay", "ChimeStore", "CLinux", "DBusKit", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "ChimeKit", "DBusKit", "TestSupport", "chimed", "chime", "chime-relay", "DailyQuote", "FirstFriday",
            ]
        ),
        .testTarget(
            name: "SeedSnippetTests",
            dependencies: ["ChimeKit", "DBusKit", "TestSupport", "chimed", "chime", "chime-relay"],
            exclude: ["README.md"],
            swiftSettings: [.swiftLanguageMode(.v5), .unsafeFlags(["-suppress-warnings"])]),
        // App code written against NiceNotifications' API, compiled as it was written (Swift 5 mode, without a
        // warning: ChimeKit's closure parameters take the app's non-Sendable closures, as NiceNotifications' do) and
        // run against chimed on a private bus.
        .testTarget(
            name: "NiceNotificationsAppTests",
            dependencies: ["ChimeKit", "TestSupport", "chimed", "chime", "chime-relay"],
            swiftSettings: [.swiftLanguageMode(.v5)]),
        // DateBuilder's own XCTest file, run against ChimeKit in three zones by scripts/test.sh; Swift 5 mode and
        // no warnings shown, as it was written (its calls discard their results).
        .testTarget(
            name: "DateBuilderPeerTests", dependencies: ["ChimeKit"], exclude: ["README.md", "LICENSE"],
            swiftSettings: [.swiftLanguageMode(.v5), .unsafeFlags(["-suppress-warnings"])]),
        .target(name: "TestSupport", dependencies: ["DBusKit"], path: "Tests/TestSupport"),
    ]
)

// libFuzzer targets that need package dependencies (TOMLKit is C++), only when scripts/fuzz.sh asks:
// they have no main of their own (libFuzzer supplies it), so an ordinary build cannot link them.
if Context.environment["CHIME_FUZZ"] != nil {
    package.targets += [
        .executableTarget(name: "fuzz-config", dependencies: ["ChimeConfig", "ChimeCore"], path: "Fuzz/Config"),
        .executableTarget(name: "fuzz-dbus", dependencies: ["ChimeProtocol", "DBusKit"], path: "Fuzz/DBus"),
        .executableTarget(name: "fuzz-definition", dependencies: ["ChimeCore"], path: "Fuzz/Definition"),
    ]
}
