/* A child process tied to this one (see process.c). */
int folio_spawn_tied(const char *file, char *const argv[], char *const envp[], const char *dir, int out, int err,
                     int *pid);
