/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libfgfixture.so: exported functions with known names and clearly different
 * code sizes, for the ELF symbol tests and as frames for profiling tests.
 */

unsigned long fgfixture_alpha(unsigned long n);
unsigned long fgfixture_beta(unsigned long n);
unsigned long fgfixture_gamma(unsigned long n);
