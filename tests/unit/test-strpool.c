/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "test.h"

TEST(not_written_yet)
{
	SKIP("tests for this module are not written yet");
}
