import ChimeCore
import Dispatch
import Foundation

/// The system's tz database followed while chimed runs: a tzdata upgrade rewrites the zone files, and
/// every repeating entry's next occurrence is computed again under the new rules.
extension Daemon {
    /// Directories watched at most: the zone directory and its regions (Debian has 14, with
    /// America/Argentina and the like one level down).
    static let maximumZoneDirectories = 64

    /// The zone directory `WallClock` reads (`TZDIR`, else /usr/share/zoneinfo) and its subdirectories two
    /// levels down, leaving out the `posix` and `right` copies chimed does not read.
    nonisolated static func zoneDatabaseDirectories() -> [String] {
        let root = ZoneRulesStore.shared.directory.path
        var directories = [root]
        func subdirectories(of path: String) -> [String] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            return names.sorted().compactMap { name in
                var isDirectory: ObjCBool = false
                let full = path + "/" + name
                guard name != "posix", name != "right",
                    FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), isDirectory.boolValue
                else { return nil }
                return full
            }
        }
        for region in subdirectories(of: root) {
            directories.append(region)
            directories += subdirectories(of: region)
        }
        return Array(directories.prefix(maximumZoneDirectories))
    }

    /// A zone file changed: the rules are read again once the upgrade has settled (a package writes
    /// hundreds of files in a burst).
    func zoneDatabaseMayHaveChanged() {
        let timer = zoneDatabaseTimer ?? DispatchSource.makeTimerSource(queue: queue)
        if zoneDatabaseTimer == nil {
            timer.setEventHandler { [weak self] in
                self?.assumeIsolated { $0.zoneDatabaseChanged() }
            }
            timer.resume()
            zoneDatabaseTimer = timer
        }
        timer.schedule(deadline: .now() + .milliseconds(300))
    }

    /// Drops the zone rules read so far and reschedules every repeating entry under the new ones.
    func zoneDatabaseChanged() {
        ZoneRulesStore.shared.reload()
        let directory = ZoneRulesStore.shared.directory.path
        logger.info(
            "the time zone database in \(directory) changed; zone rules are read again and repeating entries rescheduled"
        )
        perform(scheduler.zoneRulesChanged(now: clock.now()))
    }
}
