import Foundation
import PackagePlugin

/// Embeds the page `folio serve` answers `/` with in the `FolioServe`
/// target at build time: `Page/page.html`, `page.css` and `page.js` become
/// `WebPage+HTML.swift` (by `PageEmbedder`), so the binary carries the page
/// and an install has no file more to place. The page stays three files a
/// newcomer edits as HTML, CSS and JavaScript, and `scripts/test.sh` checks
/// the JavaScript's syntax with `node --check`.
@main
struct PageEmbedding: BuildToolPlugin {
  func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
    guard target is SourceModuleTarget else { return [] }
    let folder = context.package.directoryURL.appending(path: "Sources/\(target.name)/Page")
    let inputs = ["page.html", "page.css", "page.js"].map { folder.appending(path: $0) }
    let output = context.pluginWorkDirectoryURL.appending(path: "WebPage+HTML.swift")
    return [
      .buildCommand(
        displayName: "Embedding the page of folio serve",
        executable: try context.tool(named: "PageEmbedder").url,
        arguments: inputs.map(\.path) + [output.path],
        inputFiles: inputs,
        outputFiles: [output])
    ]
  }
}
