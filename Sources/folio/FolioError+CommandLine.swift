import Folio

extension FolioError {
  /// The error as `folio` prints it: the headline, the source excerpt
  /// under it, then the remedy as a command to run.
  var commandLineText: String {
    var lines = [headline]
    if let excerpt { lines.append(excerpt) }
    if let remedy { lines.append(remedy.commandLineAdvice) }
    return lines.joined(separator: "\n")
  }
}

extension FolioError.Remedy {
  /// The step as a `folio` command line.
  var commandLineAdvice: String {
    switch self {
    case .createStore: "To create one: folio init"
    case .syncAgain: "To sync again: folio sync"
    case .commitAgain: "To commit again: folio commit"
    case .completePendingWrite: "To complete it now: folio fsck"
    case .addTable(let name): "To add it: folio tables add \(shellWord(name))"
    case .removeTable(let name): "To remove it: folio tables rm \(shellWord(name))"
    case .inferSchema(let table): "To propose one: folio schema \(shellWord(table)) --infer"
    case .removeDocument(let table): "To remove it: folio rm \(shellWord(table)) PK"
    case .showLeftOutFiles: "To see why files were left out: folio status"
    case .subscribeTable(let name): "To fetch it: folio tables subscribe \(shellWord(name))"
    }
  }
}
