#ifndef FOLIO_CBUILDINFO_H
#define FOLIO_CBUILDINFO_H

/// What the binary was built from: a tag (`v1.2.0`), or a commit
/// (`3f2a9c1d0b7e`, with `-dirty` when the tree had changes), or "" when
/// the build did not say (a plain `swift build`). scripts/build-info.sh
/// links in an object that defines it; the weak definition here answers
/// otherwise.
const char *folio_build_description(void);

#endif
