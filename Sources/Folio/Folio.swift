/// Folio's version, as `folio --version` prints it.
public let version = "0.1.0"
