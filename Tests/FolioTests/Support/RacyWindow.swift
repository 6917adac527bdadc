import FolioTestSupport
import Foundation

@testable import FolioQuery

/// Waits until the clock is past the racy margin of every file in
/// `folder` and its subfolders (a hashed table keeps its documents in
/// subfolders): from then on a check trusts their stat data alone.
func waitPastRacyWindow(of folder: String) {
  let names = (try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? []
  let newest = names.compactMap { FileStat.of(folder + "/" + $0) }.map { max($0.mtime, $0.ctime) }.max()
  guard let newest else { return }
  eventually { FileStat.now() > newest + FileStat.racyMargin }
}
