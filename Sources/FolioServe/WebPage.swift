import FolioCore

/// The page `folio serve` answers `GET /` with: a data browser in plain
/// HTML, CSS and JavaScript, one document built into the binary (no CDN,
/// no build step), speaking only the REST API beside it.
///
/// - **Tables** in the sidebar, with their counts (`/.info/tables.json`).
/// - **A grid** per table: the pk first, then the columns of the table's
///   JSON Schema, or else the union of the keys on the page; nested values
///   compact, whole on hover. A column header orders by that child path
///   (ascending, then descending) through the same REST queries any client
///   sends, so an indexed path reads its index. Pages move by cursor
///   (`startAfter`/`endBefore` with Folio's `startKey`/`endKey` for ties)
///   in both directions, and the count of matching documents comes from
///   `/.info/count`.
/// - **A filter** in the CLI's `where` language; a mistake is shown under
///   the box at its column. **Columns** picks the grid's columns and their
///   order as `query --select` does (`title, meta.size`, a name with a
///   space or a dot between backticks).
/// - **Export**: CSV and NDJSON links download the whole view (table,
///   ordering and direction, filter, columns) from `/.info/export`, and the
///   same URL is shown as a curl command with the token in a header.
/// - **Facets**: the most common values of a chosen column among the
///   documents the filter matches, with their counts (`/.info/facets`,
///   through the index where the column has one); a value adds
///   `column == value` to the filter.
/// - **Live**: the page's window is an `EventSource` query, so rows another
///   writer changed flash, and rows deleted or moved out of the window
///   leave it.
/// - **The URL** holds the table, ordering, direction, filter, columns, facet,
///   cursor, open document and tab, so reload, back, forward and a pasted link give the
///   same view.
/// - **A document** opens in a JSON editor saved by `PATCH` with
///   `if-match` (a save over someone else's change is refused, 412, not
///   lost), with History and Blame tabs (`/.info/history`, `/.info/blame`)
///   and its open conflicts, each with Keep and Take other
///   (`/.info/conflicts`).
///
/// A token given as `?auth=T` in the page's address, or typed in when the
/// server answers 401, rides on every request as `?auth=T` (the only way
/// `EventSource` can send one).
enum WebPage {
  /// The page, UTF-8: `Page/page.html` with `page.css` and `page.js` put in
  /// where it names them, embedded at build time (`WebPage+HTML.swift`,
  /// which the `PageEmbedding` plugin writes).
  static let bytes = Array(html.utf8)
}
