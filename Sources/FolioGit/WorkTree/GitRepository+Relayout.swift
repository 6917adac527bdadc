import FolioCore
import FolioSystem
import Glibc

extension GitRepository {
  /// The root tree `root` with every document file of the table folder
  /// `path` moved from its place in layout `old` to its place in `new`;
  /// other files stay where they are. `root` itself when the layouts are
  /// the same or the folder is absent.
  func relayingOut(_ root: GitTree, folder path: String, from old: TableLayout, to new: TableLayout) throws
    -> GitOID
  {
    guard old != new, let folder = try root.subtree(at: path, repository: self) else { return root.id }
    let from = TableConfig(name: "", path: path, layout: old)
    let to = TableConfig(name: "", path: path, layout: new)
    var changes: [(path: String, id: GitOID?, mode: UInt32)] = []
    for (name, id) in try folder.documentBlobs(in: "", layout: old, repository: self) {
      guard let pk = from.pk(fromDocumentName: name), let place = try? to.documentName(for: pk) else {
        continue
      }
      changes.append((path + "/" + name, nil, 0))
      changes.append((path + "/" + place, id, 0))
    }
    return changes.isEmpty ? root.id : try updatedTree(root, setting: changes)
  }
}
