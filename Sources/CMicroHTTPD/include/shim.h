#include <sys/types.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>

/* libmicrohttpd is not linked: it is opened on first use (bindings.c, made
 * by scripts/generate-lazy-bindings.py), so only `folio serve` loads it and
 * the TLS libraries it needs. Why it could not be opened, or NULL once it
 * is. */
const char *folio_mhd_load_error(void);

/* MHD_get_connection_info is variadic, which Swift cannot call. */
static inline int folio_mhd_connection_fd(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info ? info->connect_fd : -1;
}
