import FolioJSON
import Glibc

/// The stat data that tells whether a file changed since it was indexed:
/// inode, size, and modification and change times in nanoseconds. A save by
/// rename gives a new inode; an in-place write moves mtime and ctime (ctime
/// cannot be set back by a user).
package struct FileStat: Hashable, Sendable {
  package var inode: Int64
  package var size: Int64
  package var mtime: Int64
  package var ctime: Int64

  package init(inode: Int64, size: Int64, mtime: Int64, ctime: Int64) {
    self.inode = inode
    self.size = size
    self.mtime = mtime
    self.ctime = ctime
  }

  package init(_ st: stat) {
    inode = Int64(bitPattern: UInt64(st.st_ino))
    size = Int64(st.st_size)
    mtime = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
    ctime = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
  }

  /// The stat data of `path`, or nil if there is no such file.
  package static func of(_ path: String) -> FileStat? {
    var st = stat()
    return stat(path, &st) == 0 ? FileStat(st) : nil
  }

  /// How close to the moment it was taken a stat's ctime may be before the
  /// record is not trusted ("racily clean", as git calls it): a second write
  /// within the same clock tick would leave the same stat data behind.
  /// File systems stamp times from a coarse clock; one second covers them.
  static let racyMargin: Int64 = 1_000_000_000

  /// Whether this stat, taken at `checkedAt`, may hide a later change.
  package func isRacy(checkedAt: Int64) -> Bool {
    ctime + FileStat.racyMargin > checkedAt || mtime + FileStat.racyMargin > checkedAt
  }

  /// Wall-clock nanoseconds, for `checkedAt`.
  package static func now() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
  }
}

/// What the index knows about one document: its file's stat data when it
/// was read, when that was, and the value of each order key (nil when
/// missing; arrays and objects as an empty object, since they all sort
/// alike).
struct IndexEntry: Sendable, Equatable {
  var stat: FileStat
  var checkedAt: Int64
  var values: [JSONValue?]

  /// Whether the stat data may hide a later change, so the file must be
  /// read again to be sure.
  var isRacy: Bool { stat.isRacy(checkedAt: checkedAt) }

  /// The value stored for an order key: composites collapse to `{}`.
  static func indexed(_ value: JSONValue?) -> JSONValue? {
    switch value {
    case nil, .null?: nil
    case .array?, .object?: .object(JSONObject())
    default: value
    }
  }
}
