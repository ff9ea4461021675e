// SPDX-License-Identifier: GPL-2.0-or-later
/* Terminal progress line, rate-limited, silent when not on a tty. */
#include "config.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "fsforge/progress.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void fsf_progress_init(struct fsf_progress *p, const char *label, bool allow)
{
	p->label = label;
	p->enabled = allow && isatty(STDERR_FILENO);
	p->last_ms = 0;
	p->last_pct = -1;
}

void fsf_progress_update(struct fsf_progress *p, uint64_t done, uint64_t total)
{
	uint64_t t;
	int pct;

	if (!p->enabled || !total)
		return;
	pct = (int)(done * 100 / total);
	t = now_ms();
	if (pct == p->last_pct || (t - p->last_ms < 100 && pct != 100))
		return;
	p->last_ms = t;
	p->last_pct = pct;
	fprintf(stderr, "\r%s: %3d%% (%llu/%llu)", p->label, pct,
		(unsigned long long)done, (unsigned long long)total);
	fflush(stderr);
}

void fsf_progress_done(struct fsf_progress *p)
{
	if (p->enabled && p->last_pct >= 0)
		fputs("\r\033[K", stderr);
	p->last_pct = -1;
}
