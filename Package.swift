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
    // libgit2 and libmicrohttpd are opened on first use, not linked
    // (scripts/generate-lazy-bindings.py): a command that touches neither
    // starts without loading them and the dozen libraries they bring.
    // Their headers come from libgit2-dev and libmicrohttpd-dev.
    .target(name: "Clibgit2"),
    // libyaml, libsqlite3 and zlib are linked from their static archives
    // (see each module map), without pkg-config, whose flags would link the
    // shared libraries too.
    .systemLibrary(
      name: "CYAML",
      providers: [.apt(["libyaml-dev"])]
    ),
    .systemLibrary(
      name: "CSQLite",
      providers: [.apt(["libsqlite3-dev"])]
    ),
    .systemLibrary(
      name: "CZlib",
      providers: [.apt(["zlib1g-dev"])]
    ),
    .target(name: "CMicroHTTPD"),
    .systemLibrary(name: "CSystem"),
    // The one thing Swift cannot do safely: code between fork and exec
    // (a child that dies with its parent, for the system git).
    .target(name: "CProcess"),
    // SHA-1 on the processor's SHA extensions, where it has them (git's
    // index and pack trailers).
    .target(name: "CSHA1"),
    // What the binary was built from, for `folio --version`
    // (scripts/build-info.sh links in the answer).
    .target(name: "CBuildInfo"),
    // The library's layers, lowest first. A target depends only on those
    // before it, so the compiler refuses an upward reference; what crosses
    // targets inside the package is `package`, and `Folio` re-exports the
    // public API of them all.
    .target(name: "FolioSystem", dependencies: ["CSystem", "CProcess", "CSHA1"]),
    .target(name: "FolioJSON", dependencies: ["FolioSystem"]),
    .target(name: "FolioCore", dependencies: ["FolioJSON", "FolioSystem", "CYAML"]),
    .target(name: "FolioQuery", dependencies: ["FolioCore", "FolioJSON", "FolioSystem"]),
    .target(
      name: "FolioGit",
      dependencies: ["FolioQuery", "FolioCore", "FolioJSON", "FolioSystem", "Clibgit2", "CZlib"]),
    .target(name: "FolioWatch", dependencies: ["FolioGit", "FolioCore", "FolioJSON", "FolioSystem"]),
    .target(name: "FolioIndexDaemon", dependencies: ["FolioQuery", "FolioCore", "FolioJSON", "FolioSystem"]),
    .target(
      name: "FolioTransfer",
      dependencies: [
        "FolioGit", "FolioQuery", "FolioCore", "FolioJSON", "FolioSystem", "CSQLite", "Clibgit2",
      ]),
    // The page `folio serve` answers `/` with: HTML, CSS and JavaScript in
    // Sources/FolioServe/Page, embedded at build time by the plugin.
    .executableTarget(name: "PageEmbedder"),
    .plugin(name: "PageEmbedding", capability: .buildTool(), dependencies: ["PageEmbedder"]),
    .target(
      name: "FolioServe",
      dependencies: [
        "FolioTransfer", "FolioGit", "FolioQuery", "FolioCore", "FolioJSON", "FolioSystem", "CMicroHTTPD",
        "CSystem",
      ],
      exclude: ["Page"],
      plugins: ["PageEmbedding"]),
    .target(
      name: "Folio",
      dependencies: [
        "FolioSystem", "FolioJSON", "FolioCore", "FolioQuery", "FolioGit", "FolioWatch", "FolioIndexDaemon",
        "FolioTransfer", "FolioServe",
      ]
    ),
    .executableTarget(
      name: "FolioCLI",
      dependencies: ["Folio", "FolioSystem", "CBuildInfo"],
      path: "Sources/folio"
    ),
    .executableTarget(
      name: "FolioBench",
      dependencies: ["Folio", "FolioSystem", "CSystem"]
    ),
    // What both test targets share: the git helper, the scratch store, the
    // git daemon and sshd, loopback ports, seeds, and waiting for a state.
    .target(
      name: "FolioTestSupport",
      dependencies: ["Folio", "FolioSystem"],
      path: "Tests/FolioTestSupport"
    ),
    .testTarget(
      name: "FolioTests",
      dependencies: [
        "Folio", "FolioSystem", "FolioJSON", "FolioCore", "FolioQuery", "FolioGit", "FolioWatch",
        "FolioIndexDaemon", "FolioTransfer", "FolioServe", "FolioTestSupport",
      ],
      // Test data read by path (the JSON-Schema-Test-Suite cases), not bundled.
      exclude: ["Resources"]
    ),
    .testTarget(
      name: "FolioCLITests",
      dependencies: [
        "Folio", "FolioSystem", "FolioJSON", "FolioCore", "FolioQuery", "FolioGit", "FolioWatch",
        "FolioIndexDaemon", "FolioTransfer", "FolioServe", "FolioCLI", "FolioTestSupport",
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
