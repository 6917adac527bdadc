import Foundation
import Testing

/// Data files that public packages ship, which nobody here wrote: the
/// tests that check answers against a reference read them where
/// `scripts/install-deps.sh` installs them (PyPI's `palmerpenguins` and
/// `vega_datasets`, in the virtual environment at `FOLIO_VENV`).
public enum PublicData {
  /// The virtual environment `scripts/install-deps.sh` makes.
  public static let venv = ProcessInfo.processInfo.environment["FOLIO_VENV"] ?? "/opt/folio-venv"

  /// Its Python, which the tests also use as a reference.
  public static var python: String { venv + "/bin/python" }

  /// The path of `relative` inside the environment's site-packages, such as
  /// `palmerpenguins/data/penguins.csv`, or nil when it is not installed.
  public static func path(_ relative: String) -> String? {
    let lib = venv + "/lib"
    guard let versions = try? FileManager.default.contentsOfDirectory(atPath: lib) else { return nil }
    for version in versions.sorted() where version.hasPrefix("python") {
      let candidate = "\(lib)/\(version)/site-packages/\(relative)"
      if FileManager.default.fileExists(atPath: candidate) { return candidate }
    }
    return nil
  }

  /// The penguins of the Palmer Archipelago (344 rows; `NA` for what was
  /// not measured), from PyPI's `palmerpenguins`.
  public static var penguinsCSV: String? { path("palmerpenguins/data/penguins.csv") }

  /// The same study's raw table: 17 columns whose names hold spaces and
  /// parentheses, quoted fields with commas, `NA`.
  public static var penguinsRawCSV: String? { path("palmerpenguins/data/penguins-raw.csv") }

  /// A file of `vega_datasets`' bundled data, such as `cars.json` (a JSON
  /// array with nulls) or `la-riots.csv`.
  public static func vega(_ name: String) -> String? { path("vega_datasets/_data/" + name) }

  /// Why a test that needs these files cannot run, for `.enabled(if:)`.
  public static let missingReason: Comment =
    "needs palmerpenguins and vega_datasets in \(venv): run scripts/install-deps.sh"
}
