/* Draws values from a fuzz input, front to back; past its end every draw is 0 (so any input,
 * however short, describes one complete call). C and C++. */
#ifndef FLCC_FUZZ_INPUT_H
#define FLCC_FUZZ_INPUT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    const uint8_t *data;
    size_t size, pos;
} fuzz_input;

static inline fuzz_input fuzz_begin(const uint8_t *data, size_t size)
{
    fuzz_input in;
    in.data = data;
    in.size = size;
    in.pos = 0;
    return in;
}

static inline uint8_t fuzz_u8(fuzz_input *in)
{
    return in->pos < in->size ? in->data[in->pos++] : 0;
}

static inline uint32_t fuzz_u32(fuzz_input *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= (uint32_t)fuzz_u8(in) << (8 * i);
    return v;
}

/* Copies up to n bytes (fewer past the end); returns how many. */
static inline size_t fuzz_bytes(fuzz_input *in, void *dst, size_t n)
{
    const size_t left = in->size - in->pos;
    if (n > left) n = left;
    if (n == 0) return 0;   /* data may be NULL when size is 0 */
    memcpy(dst, in->data + in->pos, n);
    in->pos += n;
    return n;
}

/* An int that is usually in [0, small], sometimes an edge value, sometimes any int. */
static inline int fuzz_int(fuzz_input *in, int small)
{
    static const int edges[] = {0, 1, 2, 3, -1, -2, INT_MIN, INT_MAX, INT_MAX - 1, 46340, 46341,
                                65535, 65536, 1 << 20, 1 << 24, 1 << 30, 1000000, 31, 32, 33};
    const uint8_t k = fuzz_u8(in);
    if (k < 208) return k % (small + 1);
    if (k < 248) return edges[k % (sizeof edges / sizeof edges[0])];
    return (int)fuzz_u32(in);
}

#endif
