#define GIT_DEPRECATE_HARD
#include <git2.h>
#include <git2/sys/merge.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>

/* libgit2 is not linked: it is opened on first use (bindings.c, made by
 * scripts/generate-lazy-bindings.py), so the commands that never touch git
 * start without loading it and the libraries it needs. Why it could not
 * be opened, or NULL once it is. */
const char *folio_git2_load_error(void);

/* git_libgit2_opts is variadic, which Swift cannot call: fixed-arity
 * wrappers for the options Folio sets (see LibGit2.start). The lazy
 * binding forwards an int and a size_t, so every call passes both. */
static inline int folio_git_set_strict_checks(int object_creation, int hash_verification) {
  int rc = git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, object_creation, (size_t)0);
  if (rc < 0) return rc;
  return git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, hash_verification, (size_t)0);
}

/* The largest tree libgit2 keeps in its object cache (4 KB by default). */
static inline int folio_git_set_tree_cache_limit(size_t bytes) {
  return git_libgit2_opts(GIT_OPT_SET_CACHE_OBJECT_LIMIT, (int)GIT_OBJECT_TREE, bytes);
}
