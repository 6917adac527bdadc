#define GIT_DEPRECATE_HARD
#include <git2.h>
#include <git2/sys/merge.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>

/* git_libgit2_opts is variadic, which Swift cannot call: one fixed-arity
 * wrapper for the two checks Folio turns off (see LibGit2.initialized). */
static inline int folio_git_set_strict_checks(int object_creation, int hash_verification) {
  int rc = git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, object_creation);
  if (rc < 0) return rc;
  return git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, hash_verification);
}
