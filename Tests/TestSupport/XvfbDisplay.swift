import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A virtual X display for one test: Xvfb on a display number it picks itself, so tests (and other
/// checkouts' tests) running side by side never race for the same `:N`.
public final class XvfbDisplay: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; `process` is itself Sendable.
    /// N of the display `:N`.
    public let number: Int
    public let process: ManagedProcess

    /// `:N`, the value of DISPLAY.
    public var name: String { ":\(number)" }
    /// The environment a child process needs to draw on this display.
    public var environment: [String: String] { ["DISPLAY": name] }

    /// Starts `Xvfb -screen 0 WIDTHxHEIGHTx24 -nolisten tcp` and returns once it accepts connections.
    /// Its output files go to `directory`.
    public static func start(
        in directory: URL, width: Int = 1280, height: Int = 800, timeout: Duration = .seconds(20)
    ) async throws -> XvfbDisplay {
        // With -displayfd, Xvfb takes the first display number it can listen on (no guessing from
        // /tmp/.X11-unix, no race) and writes it to that descriptor, here its stdout, once it is ready.
        let process = try ManagedProcess(
            "/usr/bin/Xvfb", ["-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp"],
            directory: directory)
        do {
            try await Await.condition("Xvfb wrote its display number", timeout: timeout, watching: process.stdoutURL) {
                process.stdout.hasSuffix("\n") || process.hasExited
            }
        } catch {
            await process.stop()
            throw error
        }
        guard !process.hasExited, let number = Int(process.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            await process.stop()
            throw HarnessFailure("Xvfb did not start: \(process.stderr)")
        }
        return XvfbDisplay(number: number, process: process)
    }

    private init(number: Int, process: ManagedProcess) {
        self.number = number
        self.process = process
    }

    /// Captures the whole screen as a PNG at `url` with ImageMagick (`import -window root`).
    public func screenshot(to url: URL, timeout: Duration = .seconds(20)) async throws {
        try await ManagedProcess.run(
            "/usr/bin/import", ["-display", name, "-window", "root", url.path],
            directory: process.stdoutURL.deletingLastPathComponent(), timeout: timeout)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw HarnessFailure("import wrote no \(url.path)")
        }
    }

    /// How many distinct colours the image at `url` has (ImageMagick's `identify -format %k`): 1 for a
    /// blank screen.
    public static func colorCount(ofImage url: URL, timeout: Duration = .seconds(20)) async throws -> Int {
        try await number(from: "/usr/bin/identify", ["-format", "%k", url.path], reading: url, timeout: timeout)
    }

    /// How many pixels of the image at `url` are light (above 60 % grey, as dunst's white text on its dark
    /// popups): more for the same words in bold. ImageMagick's `convert`.
    public static func lightPixelCount(ofImage url: URL, timeout: Duration = .seconds(20)) async throws -> Int {
        try await number(
            from: "/usr/bin/convert",
            [url.path, "-colorspace", "gray", "-threshold", "60%", "-format", "%[fx:round(mean*w*h)]", "info:"],
            reading: url, timeout: timeout)
    }

    /// Runs an ImageMagick tool on the image at `url` and reads the number it prints.
    private static func number(from tool: String, _ arguments: [String], reading url: URL, timeout: Duration)
        async throws -> Int
    {
        let outcome = try await ManagedProcess.run(
            tool, arguments, directory: url.deletingLastPathComponent(), timeout: timeout)
        guard let count = Int(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw HarnessFailure(
                "\((tool as NSString).lastPathComponent) printed \"\(outcome.output)\" for \(url.path)")
        }
        return count
    }

    /// Stops Xvfb by its PID. On SIGTERM it removes its socket itself; if it had to be killed, the socket
    /// (and a lock file naming its PID) are removed here so the number is free again.
    public func stop() async {
        let status = await process.stop()
        guard status == 128 + SIGKILL else { return }
        let lock = "/tmp/.X\(number)-lock"
        if let text = try? String(contentsOfFile: lock, encoding: .utf8),
            Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) == process.pid
        {
            unlink(lock)
        }
        unlink("/tmp/.X11-unix/X\(number)")
    }
}

/// A test harness could not start or drive a program it needs; the message says what it saw.
public struct HarnessFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
