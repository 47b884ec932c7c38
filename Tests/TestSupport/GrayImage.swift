import Foundation

/// A rectangle of the screen, in pixels from its top-left corner.
public struct ScreenRegion: Sendable, Equatable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var center: (x: Int, y: Int) { (x + width / 2, y + height / 2) }
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// A screenshot as grey levels (0 black to 255 white), to measure what a popup shows: how much text it
/// has, and where the labels of its buttons are.
public struct GrayImage: Sendable {
    public let width: Int
    public let height: Int
    /// Row by row, from the top-left corner.
    public let pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height, "\(pixels.count) pixels for \(width)x\(height)")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Reads the image at `url` (any format ImageMagick reads) as a binary PGM from `convert`, after
    /// `operations` of `convert` on it, if any.
    public static func read(_ url: URL, after operations: [String] = [], timeout: Duration = .seconds(20))
        async throws -> GrayImage
    {
        let outcome = try await ManagedProcess.run(
            "/usr/bin/convert", [url.path] + operations + ["-colorspace", "gray", "-depth", "8", "pgm:-"],
            directory: url.deletingLastPathComponent(), timeout: timeout)
        return try portableGraymap(outcome.stdout)
    }

    /// Parses a binary PGM as `convert` writes it: `P5`, width, height and 255, each followed by one
    /// whitespace byte, then the pixels.
    static func portableGraymap(_ data: Data) throws -> GrayImage {
        let bytes = [UInt8](data)
        var header: [String] = []
        var field = ""
        var index = 0
        while header.count < 4, index < bytes.count {
            let byte = bytes[index]
            index += 1
            if [0x20, 0x0A, 0x0D, 0x09].contains(byte) {
                if !field.isEmpty { header.append(field) }
                field = ""
            } else {
                field.append(Character(UnicodeScalar(byte)))
            }
        }
        guard header.count == 4, header[0] == "P5", header[3] == "255", let width = Int(header[1]),
            let height = Int(header[2]), bytes.count - index == width * height
        else { throw HarnessFailure("not an 8-bit binary PGM: header \(header), \(bytes.count) bytes") }
        return GrayImage(width: width, height: height, pixels: Array(bytes[index...]))
    }

    public subscript(x: Int, y: Int) -> UInt8 { pixels[y * width + x] }

    /// The part inside `region`, clipped to the image.
    public func cropped(to region: ScreenRegion) -> GrayImage {
        let left = max(0, region.x)
        let top = max(0, region.y)
        let right = min(width, region.x + region.width)
        let bottom = min(height, region.y + region.height)
        guard right > left, bottom > top else { return GrayImage(width: 0, height: 0, pixels: []) }
        var part: [UInt8] = []
        part.reserveCapacity((right - left) * (bottom - top))
        for y in top..<bottom { part += pixels[(y * width + left)..<(y * width + right)] }
        return GrayImage(width: right - left, height: bottom - top, pixels: part)
    }

    /// How many pixels `isInk` holds for.
    public func count(where isInk: (UInt8) -> Bool) -> Int { pixels.reduce(0) { isInk($1) ? $0 + 1 : $0 } }

    /// The words of the lowest line of ink, left to right: the labels of a popup's buttons, which sit
    /// below its text. Inked rows next to each other make a line; along the line, ink closer than
    /// `wordGap` pixels belongs to one label ("Stop Repeat" is one). `margin` pixels along each edge are
    /// left out (a popup's border and rounded corners).
    public func lowestLineOfWords(
        isInk: (UInt8) -> Bool, margin: Int = 10, wordGap: Int = 12
    ) -> [ScreenRegion] {
        let columns = margin..<max(margin, width - margin)
        let rows = margin..<max(margin, height - margin)
        func inked(_ y: Int) -> Bool { columns.contains { isInk(self[$0, y]) } }
        guard let bottom = rows.reversed().first(where: inked) else { return [] }
        var top = bottom
        while top - 1 >= rows.lowerBound, inked(top - 1) { top -= 1 }
        var words: [ScreenRegion] = []
        for x in columns where (top...bottom).contains(where: { isInk(self[x, $0]) }) {
            if let last = words.last, x - (last.x + last.width) < wordGap {
                words[words.count - 1].width = x - last.x + 1
            } else {
                words.append(ScreenRegion(x: x, y: top, width: 1, height: bottom - top + 1))
            }
        }
        return words
    }
}
