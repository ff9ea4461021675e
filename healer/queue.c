// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The in-process event queue between the one reader thread and the
 * workers.  Bounded (default 16384 events: 1 MiB of 64-byte records plus
 * one byte of flags each, as the reference's 1 MiB): the
 * reader never waits for a worker; when the queue is full an event is
 * counted as lost, and the count is queued as one LOST event (marked as
 * ours, HM_QF_QUEUE) as soon as there is room again, so that the workers
 * treat it exactly like the kernel's own LOST event: reported and followed
 * by a full re-check.  The last slot is kept for that notice.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "healer.h"

int hm_queue_init(struct hm_queue *q, size_t cap)
{
	memset(q, 0, sizeof(*q));
	if (cap < 2)
		cap = 2;
	q->ring = calloc(cap, sizeof(*q->ring));
	q->flags = calloc(cap, 1);
	if (!q->ring || !q->flags) {
		free(q->ring);
		free(q->flags);
		return -ENOMEM;
	}
	q->cap = cap;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->nonempty, NULL);
	pthread_cond_init(&q->nonfull, NULL);
	return 0;
}

void hm_queue_destroy(struct hm_queue *q)
{
	free(q->ring);
	free(q->flags);
	q->ring = NULL;
	q->flags = NULL;
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->nonempty);
	pthread_cond_destroy(&q->nonfull);
}

/* with q->mu held and room for one entry */
static void put(struct hm_queue *q, const struct xfs_health_monitor_event *ev,
		unsigned int flags)
{
	size_t i = (q->head + q->n) % q->cap;

	q->ring[i] = *ev;
	q->flags[i] = (unsigned char)flags;
	q->n++;
	q->queued++;
	if (q->n > q->peak)
		q->peak = q->n;
	pthread_cond_signal(&q->nonempty);
}

/* with q->mu held: the notice for events we dropped, if there is room */
static void put_lost(struct hm_queue *q, uint64_t time_ns)
{
	struct xfs_health_monitor_event ev;

	if (!q->lost_pending || q->n == q->cap)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.domain = XFS_HM_DOMAIN_MOUNT;
	ev.type = XFS_HM_TYPE_LOST;
	ev.time_ns = time_ns;
	ev.e.lost.count = q->lost_pending;
	q->lost_pending = 0;
	put(q, &ev, HM_QF_QUEUE);
}

bool hm_queue_push(struct hm_queue *q,
		   const struct xfs_health_monitor_event *ev, bool wait)
{
	bool ok = true;

	pthread_mutex_lock(&q->mu);
	if (wait) {
		/* room for a pending loss notice and the event */
		while (!q->stopping &&
		       q->n + (q->lost_pending ? 2 : 1) > q->cap)
			pthread_cond_wait(&q->nonfull, &q->mu);
		if (q->stopping) {
			pthread_mutex_unlock(&q->mu);
			return false;
		}
	}
	put_lost(q, ev->time_ns);
	/* the last slot is kept for the loss notice */
	if (q->n + 1 < q->cap || (wait && q->n < q->cap)) {
		put(q, ev, 0);
	} else {
		q->lost_pending++;
		q->lost_total++;
		ok = false;
	}
	pthread_mutex_unlock(&q->mu);
	return ok;
}

bool hm_queue_push_ctl(struct hm_queue *q,
		       const struct xfs_health_monitor_event *ev,
		       unsigned int flags)
{
	bool ok;

	pthread_mutex_lock(&q->mu);
	ok = !q->stopping && !q->closed && q->n + 1 < q->cap;
	if (ok)
		put(q, ev, flags);
	pthread_mutex_unlock(&q->mu);
	return ok;
}

void hm_queue_close(struct hm_queue *q, uint64_t time_ns)
{
	pthread_mutex_lock(&q->mu);
	while (!q->stopping && q->lost_pending && q->n == q->cap)
		pthread_cond_wait(&q->nonfull, &q->mu);
	put_lost(q, time_ns);
	q->closed = true;
	pthread_cond_broadcast(&q->nonempty);
	pthread_mutex_unlock(&q->mu);
}

void hm_queue_stop(struct hm_queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->stopping = true;
	pthread_cond_broadcast(&q->nonempty);
	pthread_cond_broadcast(&q->nonfull);
	pthread_mutex_unlock(&q->mu);
}

bool hm_queue_pop(struct hm_queue *q, struct hm_qent *out)
{
	pthread_mutex_lock(&q->mu);
	while (!q->stopping && !q->n && !q->closed)
		pthread_cond_wait(&q->nonempty, &q->mu);
	if (q->stopping || !q->n) {
		pthread_mutex_unlock(&q->mu);
		return false;
	}
	out->ev = q->ring[q->head];
	out->flags = q->flags[q->head];
	q->head = (q->head + 1) % q->cap;
	q->n--;
	pthread_cond_signal(&q->nonfull);
	pthread_mutex_unlock(&q->mu);
	return true;
}

size_t hm_queue_len(struct hm_queue *q)
{
	size_t n;

	pthread_mutex_lock(&q->mu);
	n = q->n;
	pthread_mutex_unlock(&q->mu);
	return n;
}
