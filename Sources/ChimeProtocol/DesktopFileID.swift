/// Desktop file ids as the launcher-badge signal (`com.canonical.Unity.LauncherEntry`) names them
/// (`application://ID.desktop`): chimed's badges and ChimeKit's `setBadgeCount` apply the same rule.
public enum DesktopFileID {
    /// `text` as a desktop file id without its `.desktop` suffix, when it is one: 1 to 255 bytes of ASCII
    /// letters, digits, `.`, `-` and `_`, not starting with a dot or a dash and without empty parts.
    public static func parse(_ text: String?) -> String? {
        guard var id = text else { return nil }
        if id.hasSuffix(".desktop") { id.removeLast(".desktop".count) }
        guard !id.isEmpty, id.utf8.count <= 255, !id.hasPrefix("."), !id.hasPrefix("-"), !id.hasSuffix("."),
            !id.contains(".."),
            id.utf8.allSatisfy({ byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2E || byte == 0x2D || byte == 0x5F
            })
        else { return nil }
        return id
    }
}
