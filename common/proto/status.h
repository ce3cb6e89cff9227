/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The status reply (docs/PROTOCOL.md, "Status"): the one encoder fgd uses
 * and the one decoder fgctl uses for the typed struct of
 * proto/status-types.h. Both walk the same member tables (status.c), so a
 * member cannot be written under one name and read under another.
 */

#include <json-c/json.h>

#include "proto/status-types.h"

#include "proto/schema.h"

/*
 * The longest array a decoded status may hold: far above any machine's CPUs
 * or fgd's recordings and tiers, and a bound on what a hostile reply costs
 * beyond its own JSON.
 */
#define FG_STATUS_MAX_ARRAY 65536

/*
 * The status reply: a protocol message ("fgd", "type": "status") with every
 * member of s, in the order of the struct (and of status.c's tables; docs/
 * PROTOCOL.md says what each means). s is borrowed for the call. Returns a new object the caller puts with json_object_put(), or
 * NULL on ENOMEM.
 */
struct json_object *fg_status_to_json(const struct fg_status *s);

/*
 * Reads a status reply into *ret, which the caller releases with
 * fg_status_done() and whose strings point into obj (borrowed until obj is
 * put). A member that is absent reads as zero, false or NULL (an older fgd);
 * members it does not know are ignored (a newer one); "fgd" and "type" are
 * the caller's to check. Returns 0, -EBADMSG for obj not an object, a member
 * of the wrong JSON type (null included), an integer out of its member's
 * range (a negative count), or an array longer than FG_STATUS_MAX_ARRAY, or
 * -ENOMEM. *ret is untouched on failure.
 */
int fg_status_from_json(struct json_object *obj, struct fg_status *ret);

/* Tables more than one schema holds (proto/schema.h): recording metadata (meta.c) shares them. */
extern const struct fg_schema_member fg_status_cpu_members[];
extern const struct fg_schema_member fg_status_stack_quality_members[];
