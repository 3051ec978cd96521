/* SPDX-License-Identifier: BSD-3-Clause */
/* Payload copies between frames and SGE lists (MR addresses are process virtual addresses). */
#include <string.h>

#include "droce_icrc.h"
#include "droce_internal.h"

void
droce_cursor_seek(struct droce_cursor *c, const struct droce_sge *sge, uint32_t num_sge,
		  uint32_t pos)
{
	uint32_t left = pos;

	c->sge = 0;
	c->pos = pos;
	/* zero-length entries are stepped over wherever they sit */
	while (c->sge < num_sge && left >= sge[c->sge].length) {
		left -= sge[c->sge].length;
		c->sge++;
	}
	c->off = left;
}

/* Out of an SGE list into a frame, carrying a CRC over the bytes when with_crc (one pass:
 * droce_crc32_copy). Callers have checked that len fits in what remains of the list. */
static inline __attribute__((always_inline)) uint32_t
copy_out(uint8_t *dst, const struct droce_sge *sge, struct droce_cursor *c, uint32_t len,
	 uint32_t crc, bool with_crc)
{
	c->pos += len;
	while (len > 0) {
		uint32_t avail = sge[c->sge].length - c->off;
		uint32_t n = len < avail ? len : avail;
		const void *src = (const void *)(uintptr_t)(sge[c->sge].addr + c->off);

		if (with_crc)
			crc = droce_crc32_copy(crc, dst, src, n);
		else
			memcpy(dst, src, n);
		dst += n;
		len -= n;
		c->off += n;
		if (c->off == sge[c->sge].length) {
			c->sge++;
			c->off = 0;
		}
	}
	return crc;
}

void
droce_copy_out(uint8_t *dst, const struct droce_sge *sge, struct droce_cursor *c, uint32_t len)
{
	copy_out(dst, sge, c, len, 0, false);
}

/* droce_copy_out() that carries a CRC over the bytes it copies (droce_tx_icrc_head()). */
uint32_t
droce_copy_out_crc(uint8_t *dst, const struct droce_sge *sge, struct droce_cursor *c, uint32_t len,
		   uint32_t crc)
{
	return copy_out(dst, sge, c, len, crc, true);
}

void
droce_copy_in(const struct droce_sge *sge, struct droce_cursor *c, const uint8_t *src, uint32_t len)
{
	c->pos += len;
	while (len > 0) {
		uint32_t avail = sge[c->sge].length - c->off;
		uint32_t n = len < avail ? len : avail;

		memcpy((void *)(uintptr_t)(sge[c->sge].addr + c->off), src, n);
		src += n;
		len -= n;
		c->off += n;
		if (c->off == sge[c->sge].length) {
			c->sge++;
			c->off = 0;
		}
	}
}
