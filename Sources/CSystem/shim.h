/* Linux calls that glibc declares only under _GNU_SOURCE. */
#include <sys/statfs.h>
int syncfs(int fd);
int pipe2(int fds[2], int flags);
int accept4(int fd, void *address, unsigned int *length, int flags);
