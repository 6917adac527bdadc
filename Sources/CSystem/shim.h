/* Linux calls that glibc declares only under _GNU_SOURCE. */
#include <sys/statfs.h>
int syncfs(int fd);
int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);
int pipe2(int fds[2], int flags);
#include <stddef.h>
void *memmem(const void *haystack, size_t haystacklen, const void *needle, size_t needlelen);
int accept4(int fd, void *address, unsigned int *length, int flags);
#include <spawn.h>
int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);
#include <stdio.h>
/* Swift 6 cannot name the C global `stdout`; this sets it line-buffered. */
static inline void folio_line_buffer_stdout(void) { setvbuf(stdout, NULL, _IOLBF, 0); }
#include <sys/eventfd.h>
