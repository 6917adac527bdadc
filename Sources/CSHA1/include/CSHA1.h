#ifndef FOLIO_CSHA1_H
#define FOLIO_CSHA1_H

#include <stddef.h>
#include <stdint.h>

/// Whether this processor has the SHA extensions (and SSSE3 and SSE4.1,
/// which the rounds below also use).
int folio_sha1_hardware(void);

/// Runs SHA-1's compression over `blocks` 64-byte blocks at `data`,
/// updating `state` (five words, A to E). Call only when
/// folio_sha1_hardware() says so.
void folio_sha1_blocks(uint32_t state[5], const uint8_t *data, size_t blocks);

#endif
