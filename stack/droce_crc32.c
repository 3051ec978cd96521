/* SPDX-License-Identifier: BSD-3-Clause */
/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320): reference and table implementations. */
#include "droce_icrc.h"

#define CRC32_POLY_REFLECTED 0xEDB88320u

uint32_t
droce_crc32_bitwise(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int k;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (CRC32_POLY_REFLECTED & (0u - (crc & 1)));
	}
	return ~crc;
}

static uint32_t crc32_tab[256];

static void __attribute__((constructor))
crc32_tab_init(void)
{
	uint32_t i, c;
	int k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (CRC32_POLY_REFLECTED & (0u - (c & 1)));
		crc32_tab[i] = c;
	}
}

uint32_t
droce_crc32_table(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = ~crc;
	while (len--)
		crc = (crc >> 8) ^ crc32_tab[(crc ^ *p++) & 0xFF];
	return ~crc;
}

uint32_t
droce_crc32(uint32_t crc, const void *buf, size_t len)
{
	return droce_crc32_table(crc, buf, len);
}

const char *
droce_crc32_impl_name(void)
{
	return "table";
}
