/// The bounds a TZif file must keep. A zone file is input from disk (a `TZDIR` anyone may set, a tzdata
/// package), so its size and every count in its header are checked before anything is allocated.
///
/// The counts are tzcode's own (`TZ_MAX_TIMES`, `TZ_MAX_TYPES`, `TZ_MAX_LEAPS` in `tzfile.h`), which the
/// reference implementation applies to every file it reads; the system's tzdata stays far below them
/// (at most 310 transitions, 18 types and 40 abbreviation bytes in Debian's 2025 release).
public enum TZifLimits {
    /// The largest file read, in bytes: a file within every count below is at most about 36 KiB.
    public static let maximumFileBytes = 65_536
    /// Transitions in one data block.
    public static let maximumTransitions = 2_000
    /// Local time types in one data block (the transition table indexes them with one byte).
    public static let maximumTypes = 256
    /// Bytes of abbreviations in one data block.
    public static let maximumAbbreviationBytes = 256
    /// Leap-second records in one data block.
    public static let maximumLeapRecords = 50
    /// Bytes of the footer's POSIX TZ string.
    public static let maximumFooterBytes = 256
    /// RFC 8536's range for a UT offset: more than -25 hours and less than 26 hours.
    public static let utcOffsetRange = -89_999...93_599
}
