@_exported public import FolioCore
@_exported public import FolioGit
@_exported public import FolioIndexDaemon
@_exported public import FolioJSON
@_exported public import FolioQuery
@_exported public import FolioServe
@_exported public import FolioSystem
@_exported public import FolioTransfer
@_exported public import FolioWatch

/// Folio's version, as `folio --version` prints it.
public let version = "0.1.0"
