internal import Clibgit2
import Glibc

extension GitIndex {
  /// Stages many files at once: `count` new entries, given in path order by
  /// `update(i)` as (index path, blob id, file on disk), merged with the
  /// existing entries in one pass. Each new entry gets the file's stat data,
  /// so `git status` sees it as clean without rehashing.
  ///
  /// Inserting 300k paths one by one into a sorted index shifts the entries
  /// after each; rebuilding in order appends instead.
  func bulkUpdate(count: Int, _ update: (Int) -> (path: String, id: GitOID, file: String)) throws {
    var saved: OpaquePointer?
    try LibGit2.check(git_index_new(&saved), "git_index_new")
    defer { git_index_free(saved) }
    let existing = git_index_entrycount(handle)
    for i in 0..<existing {
      try LibGit2.check(git_index_add(saved, git_index_get_byindex(handle, i)), "git_index_add")
    }
    try LibGit2.check(git_index_clear(handle), "git_index_clear")
    var i = 0
    var j = 0
    var next = count > 0 ? update(0) : nil
    while i < existing || next != nil {
      let old = i < existing ? git_index_get_byindex(saved, i) : nil
      if let old, let pending = next {
        let order = strcmp(old.pointee.path, pending.path)
        if order < 0 {
          try LibGit2.check(git_index_add(handle, old), "git_index_add")
          i += 1
        } else {
          if order == 0 { i += 1 }  // replaced
          try addFromFile(pending)
          j += 1
          next = j < count ? update(j) : nil
        }
      } else if let old {
        try LibGit2.check(git_index_add(handle, old), "git_index_add")
        i += 1
      } else if let pending = next {
        try addFromFile(pending)
        j += 1
        next = j < count ? update(j) : nil
      }
    }
  }

  private func addFromFile(_ item: (path: String, id: GitOID, file: String)) throws {
    var entry = GitIndex.entry(id: item.id, filePath: item.file)
    // The bytes were hashed as they were written, under the store lock: the
    // entry is known to match its file. Marking it up to date spares
    // libgit2's racy-entry check, which would rehash every new file.
    entry.flags_extended = UInt16(GIT_INDEX_ENTRY_UPTODATE.rawValue)
    try item.path.withCString { pointer in
      entry.path = pointer
      try LibGit2.check(git_index_add(handle, &entry), "git_index_add", path: item.path)
    }
  }
}
