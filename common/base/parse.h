/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Parses a whole decimal string as an integer within [min, max]: no sign, no
 * trailing characters, no overflow. Returns 0, or -EINVAL.
 */
int fg_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *ret);
