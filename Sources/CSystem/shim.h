/* Linux calls that glibc declares only under _GNU_SOURCE. */
int syncfs(int fd);
