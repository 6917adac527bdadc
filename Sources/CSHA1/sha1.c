// SHA-1's compression function on the x86 SHA extensions: git's object
// format fixes SHA-1, and Folio hashes whole index files (25 MB for 300,000
// documents) and packs with it. The rounds run four at a time
// (sha1rnds4); each group of four message words is made from the four
// groups before it (sha1msg1, a xor, sha1msg2), following FIPS 180-4's
// W[t] = rotl1(W[t-3] ^ W[t-8] ^ W[t-14] ^ W[t-16]).
#include "CSHA1.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

int folio_sha1_hardware(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  int ssse3 = (c >> 9) & 1, sse41 = (c >> 19) & 1;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  int sha = (b >> 29) & 1;
  return ssse3 && sse41 && sha;
}

#define ROUNDS(f)                                      \
  do {                                                 \
    e = k == 0 ? _mm_add_epi32(e0, m) : _mm_sha1nexte_epu32(previous, m); \
    previous = abcd;                                   \
    abcd = _mm_sha1rnds4_epu32(abcd, e, f);            \
  } while (0)

__attribute__((target("sha,ssse3,sse4.1"))) void folio_sha1_blocks(
    uint32_t state[5], const uint8_t *data, size_t blocks) {
  // Big-endian words, in the order the instructions want them.
  const __m128i order = _mm_set_epi64x(0x0001020304050607ULL, 0x08090a0b0c0d0e0fULL);
  __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)state), 0x1B);
  __m128i e0 = _mm_set_epi32((int)state[4], 0, 0, 0);
  for (; blocks > 0; blocks--, data += 64) {
    const __m128i abcd_saved = abcd, e0_saved = e0;
    __m128i w[4], previous = abcd, e, m;
    for (int k = 0; k < 20; k++) {
      if (k < 4) {
        m = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * k)), order);
      } else {
        m = _mm_sha1msg2_epu32(
            _mm_xor_si128(_mm_sha1msg1_epu32(w[k & 3], w[(k + 1) & 3]), w[(k + 2) & 3]), w[(k + 3) & 3]);
      }
      w[k & 3] = m;
      switch (k / 5) {
        case 0: ROUNDS(0); break;
        case 1: ROUNDS(1); break;
        case 2: ROUNDS(2); break;
        default: ROUNDS(3); break;
      }
    }
    e0 = _mm_sha1nexte_epu32(previous, e0_saved);
    abcd = _mm_add_epi32(abcd, abcd_saved);
  }
  _mm_storeu_si128((__m128i *)state, _mm_shuffle_epi32(abcd, 0x1B));
  state[4] = (uint32_t)_mm_extract_epi32(e0, 3);
}

#else

int folio_sha1_hardware(void) { return 0; }

void folio_sha1_blocks(uint32_t state[5], const uint8_t *data, size_t blocks) {
  (void)state;
  (void)data;
  (void)blocks;
}

#endif
