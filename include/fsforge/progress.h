/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A progress line for long work, drawn only when stderr is a terminal and
 * redrawn at most ten times a second.  The state is the caller's.
 */
#ifndef FSFORGE_PROGRESS_H
#define FSFORGE_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct fsf_progress {
	const char *label;
	bool enabled;
	uint64_t last_ms;
	int last_pct;
};

void fsf_progress_init(struct fsf_progress *p, const char *label, bool allow);
void fsf_progress_update(struct fsf_progress *p, uint64_t done, uint64_t total);
void fsf_progress_done(struct fsf_progress *p);

#endif
