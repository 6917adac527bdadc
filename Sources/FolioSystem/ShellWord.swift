/// `word` as one word for a POSIX shell: bare when it is plainly safe,
/// else in single quotes. Used for commands Folio prints for a person to
/// run and for commands it hands to a shell (`GIT_SSH_COMMAND`).
package func shellWord(_ word: String) -> String {
  let safe =
    !word.isEmpty
    && word.unicodeScalars.allSatisfy {
      $0.isASCII
        && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-/".unicodeScalars.contains($0))
    }
  return safe ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
