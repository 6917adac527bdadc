internal import Clibgit2

/// An object database backend that keeps the objects written through it in
/// memory, in order, so that a batch of writes (a commit, a merge) reaches
/// the disk as one pack of exactly those objects.
///
/// libgit2's mempack would do the collecting, but its dump packs every
/// object reachable from the new commits: after a merge in a 100k-document
/// table that is the whole tree again, read back, delta-searched and
/// written. Objects already on disk never get here: libgit2 asks every
/// backend whether it has an object before writing it.
///
/// Used from one thread: the one running the batch.
final class GitObjectCollector {
  struct Object {
    var type: git_object_t
    var bytes: [UInt8]
  }

  /// The objects, in the order they were written.
  private(set) var objects: [(id: GitOID, object: Object)] = []
  private var positions: [GitOID: Int] = [:]

  /// The blobs written here, by id.
  func blobs() -> [GitOID: [UInt8]] {
    var blobs: [GitOID: [UInt8]] = [:]
    for (id, object) in objects where object.type == GIT_OBJECT_BLOB { blobs[id] = object.bytes }
    return blobs
  }

  /// Where the collector's address sits after libgit2's struct.
  private static let contextOffset =
    (MemoryLayout<git_odb_backend>.size + MemoryLayout<UnsafeRawPointer>.alignment - 1)
    & ~(MemoryLayout<UnsafeRawPointer>.alignment - 1)

  /// A new backend that stores into this collector. The odb it is added to
  /// owns it and frees it; the collector must outlive every use of that odb.
  func makeBackend() throws -> UnsafeMutablePointer<git_odb_backend> {
    let raw = UnsafeMutableRawPointer.allocate(
      byteCount: Self.contextOffset + MemoryLayout<UnsafeRawPointer>.size,
      alignment: MemoryLayout<git_odb_backend>.alignment)
    let backend = raw.bindMemory(to: git_odb_backend.self, capacity: 1)
    try LibGit2.check(git_odb_init_backend(backend, UInt32(GIT_ODB_BACKEND_VERSION)), "git_odb_init_backend")
    raw.storeBytes(
      of: UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()), toByteOffset: Self.contextOffset,
      as: UnsafeRawPointer.self)
    backend.pointee.write = { backend, oid, data, length, type in
      let collector = GitObjectCollector.of(backend)
      let id = GitOID(oid!.pointee)
      if collector.positions[id] == nil {
        let bytes = length == 0 ? [] : Array(UnsafeRawBufferPointer(start: data, count: length))
        collector.add(id, Object(type: type, bytes: bytes))
      }
      return 0
    }
    backend.pointee.read = { buffer, length, type, backend, oid in
      guard let object = GitObjectCollector.of(backend).object(oid) else { return GIT_ENOTFOUND.rawValue }
      let copy = git_odb_backend_data_alloc(backend, object.bytes.count)
      guard let copy else { return -1 }
      object.bytes.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
      buffer!.pointee = copy
      length!.pointee = object.bytes.count
      type!.pointee = object.type
      return 0
    }
    backend.pointee.read_header = { length, type, backend, oid in
      guard let object = GitObjectCollector.of(backend).object(oid) else { return GIT_ENOTFOUND.rawValue }
      length!.pointee = object.bytes.count
      type!.pointee = object.type
      return 0
    }
    backend.pointee.exists = { backend, oid in
      GitObjectCollector.of(backend).object(oid) == nil ? 0 : 1
    }
    backend.pointee.free = { backend in
      UnsafeMutableRawPointer(backend!).deallocate()
    }
    return backend
  }

  /// Keeps `object` under `id` unless an object with that id is kept
  /// already.
  func add(_ id: GitOID, _ object: Object) {
    guard positions[id] == nil else { return }
    positions[id] = objects.count
    objects.append((id, object))
  }

  private func object(_ oid: UnsafePointer<git_oid>?) -> Object? {
    positions[GitOID(oid!.pointee)].map { objects[$0].object }
  }

  private static func of(_ backend: UnsafeMutablePointer<git_odb_backend>?) -> GitObjectCollector {
    let address = UnsafeRawPointer(backend!).load(fromByteOffset: contextOffset, as: UnsafeRawPointer.self)
    return Unmanaged<GitObjectCollector>.fromOpaque(address).takeUnretainedValue()
  }
}
