// swift-tools-version:6.0
import Foundation
import PackageDescription

// A program that uses Folio as a consumer would: through its public API
// only, with no JSON text written by hand. scripts/test.sh builds it
// against a tagged release of this checkout, the way a consumer depends on
// Folio: `FOLIO_PACKAGE_URL` names a git repository holding the tag (the
// script makes one from HEAD). Without it, the checkout is used by path.
let folio: Package.Dependency =
  ProcessInfo.processInfo.environment["FOLIO_PACKAGE_URL"].map { .package(url: $0, from: "1.0.0") }
  ?? .package(name: "Folio", path: "../..")

let package = Package(
  name: "TodoApp",
  platforms: [.macOS(.v15)],
  dependencies: [folio],
  targets: [
    .executableTarget(name: "TodoApp", dependencies: [.product(name: "Folio", package: "Folio")])
  ],
  swiftLanguageModes: [.v6]
)
