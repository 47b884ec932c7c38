import Foundation

/// Where `swift build` put the chimed and chime executables: next to the test bundle.
public enum Binaries {
    public static let directory: URL = {
        // The test runner's executable lives in the build folder (…/debug/ChimePackageTests.xctest).
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("chimed").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug")
    }()

    public static var chimed: String { directory.appendingPathComponent("chimed").path }
    public static var chime: String { directory.appendingPathComponent("chime").path }
}
