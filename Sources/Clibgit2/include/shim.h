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

/* git_libgit2_opts is variadic, which Swift cannot call: one fixed-arity
 * wrapper for the two checks Folio turns off (see LibGit2.start). */
static inline int folio_git_set_strict_checks(int object_creation, int hash_verification) {
  int rc = git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, object_creation);
  if (rc < 0) return rc;
  return git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, hash_verification);
}
