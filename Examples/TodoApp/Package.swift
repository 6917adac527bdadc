// swift-tools-version:6.0
import PackageDescription

// A program that uses Folio as a consumer would: through its public API
// only, with no JSON text written by hand. Built by scripts/test.sh.
// It depends on the checkout by path (SwiftPM cannot fetch here); a real
// consumer writes `.package(url: "…/folio.git", from: "…")` instead.
let package = Package(
  name: "TodoApp",
  platforms: [.macOS(.v15)],
  dependencies: [.package(name: "Folio", path: "../..")],
  targets: [
    .executableTarget(name: "TodoApp", dependencies: [.product(name: "Folio", package: "Folio")])
  ],
  swiftLanguageModes: [.v6]
)
