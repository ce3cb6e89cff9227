/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json-c's objects with a cleanup: _cleanup_(json_object_putp) drops the
 * reference a variable holds when it goes out of scope.
 */
#pragma once

#include <json-c/json.h>

#include "base/macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_object *, json_object_put);
