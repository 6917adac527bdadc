#define GIT_DEPRECATE_HARD
#include <git2.h>
#include <git2/sys/merge.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>
