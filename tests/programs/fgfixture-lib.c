/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Code sizes differ on purpose: alpha is a large switch, beta a few
 * instructions, so a lookup that picks a neighbour's extent is caught.
 */
#include "fgfixture.h"

/* Keeps the loops from being folded away. */
volatile unsigned long fgfixture_sink;

/* Local: in .symtab only, never in .dynsym. */
__attribute__((noinline)) static unsigned long fgfixture_local_mix(unsigned long x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdUL;
	x ^= x >> 33;
	return x;
}

__attribute__((noinline)) unsigned long fgfixture_alpha(unsigned long n)
{
	unsigned long acc = 1;

	for (unsigned long i = 0; i < n; i++) {
		switch ((i ^ acc) % 11) {
		case 0:
			acc += i * 3;
			break;
		case 1:
			acc ^= i << 7;
			break;
		case 2:
			acc = acc * 31 + i;
			break;
		case 3:
			acc -= i ^ 0x5555;
			break;
		case 4:
			acc = (acc << 5) | (acc >> 59);
			break;
		case 5:
			acc += fgfixture_local_mix(i);
			break;
		case 6:
			acc ^= acc >> 17;
			break;
		case 7:
			acc = acc / 3 + i;
			break;
		case 8:
			acc += i * i;
			break;
		case 9:
			acc ^= 0x9e3779b97f4a7c15UL;
			break;
		default:
			acc = ~acc;
			break;
		}
		fgfixture_sink = acc;
	}
	return acc;
}

__attribute__((noinline)) unsigned long fgfixture_beta(unsigned long n)
{
	return fgfixture_alpha(n) + 1;
}

__attribute__((noinline)) unsigned long fgfixture_gamma(unsigned long n)
{
	unsigned long acc = 0;

	for (unsigned long i = 0; i < n; i++)
		acc += fgfixture_beta(i & 15);
	return acc;
}
