// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "Folio",
  products: [
    .library(name: "Folio", targets: ["Folio"]),
    .executable(name: "folio", targets: ["FolioCLI"]),
    .executable(name: "folio-bench", targets: ["FolioBench"]),
  ],
  targets: [
    .systemLibrary(
      name: "Clibgit2",
      pkgConfig: "libgit2",
      providers: [.apt(["libgit2-dev"])]
    ),
    .systemLibrary(
      name: "CYAML",
      pkgConfig: "yaml-0.1",
      providers: [.apt(["libyaml-dev"])]
    ),
    .systemLibrary(
      name: "CSQLite",
      pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"])]
    ),
    .systemLibrary(
      name: "CZlib",
      pkgConfig: "zlib",
      providers: [.apt(["zlib1g-dev"])]
    ),
    .systemLibrary(
      name: "CMicroHTTPD",
      pkgConfig: "libmicrohttpd",
      providers: [.apt(["libmicrohttpd-dev"])]
    ),
    .systemLibrary(name: "CSystem"),
    .target(
      name: "Folio",
      dependencies: ["Clibgit2", "CYAML", "CSQLite", "CZlib", "CSystem", "CMicroHTTPD"]
    ),
    .executableTarget(
      name: "FolioCLI",
      dependencies: ["Folio"],
      path: "Sources/folio"
    ),
    .executableTarget(
      name: "FolioBench",
      dependencies: ["Folio", "CSystem"]
    ),
    .testTarget(
      name: "FolioTests",
      dependencies: ["Folio"],
      // Test data read by path (the JSON-Schema-Test-Suite cases), not bundled.
      exclude: ["Resources"]
    ),
    .testTarget(
      name: "FolioCLITests",
      dependencies: ["Folio", "FolioCLI"]
    ),
  ],
  swiftLanguageModes: [.v6]
)
