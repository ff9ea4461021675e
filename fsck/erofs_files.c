// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsck.erofs: a regular file's content, decoded in bounded pieces, into
 * the SHA-256 of --xattr-inode-digest and the file --extract writes.
 * With workers, the walk queues files in a ring and threads (each with
 * its own reader of the image) check them; the walk's thread reports
 * each file's problems in queue order, so the messages, their order and
 * the exit status do not depend on the number of workers.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erofs_files.h"

/* files queued at most (then the walk waits until at most LOW are
 * left, and reports those done in one go); the workers are woken when
 * BATCH are waiting (or the walk waits), not for every file, and take
 * up to TAKE at once: most files are small, and a lock and a wake-up
 * per file cost more system time than the files' preads */
#define QUEUE	64u
#define LOW	(QUEUE / 2)
#define BATCH	16u
#define TAKE	4u

struct worker {
	struct erofs_fpool *pool;
	struct erofs_img img;		/* a clone: its own cache */
	EVP_MD_CTX *md;			/* reused from file to file */
	pthread_t th;
	bool started;
};

struct erofs_fpool {
	struct erofs_img *img;		/* the walk's (inline checks) */
	const struct fsf_log *log;
	struct erofs_check_stats *st;
	unsigned int nworkers;
	struct worker *w;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	/* SHA-256 fetched once (EVP_sha256() in every init looks the
	 * implementation up again), the inline checks' context */
	EVP_MD *sha;
	EVP_MD_CTX *md;
	struct erofs_fjob *q;
	uint64_t head, take, tail;	/* report, check, submit */
	uint64_t wanted;		/* the walk waits for this job */
	bool walk_waits;
	unsigned int idle;		/* workers waiting for work */
	bool quit;
};

struct feed {
	struct erofs_img *img;
	struct erofs_fjob *j;
	EVP_MD_CTX *md;
};

static void job_problem(struct erofs_fjob *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void job_problem(struct erofs_fjob *j, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	size_t n;
	char *m;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = strlen(line) + 1;
	m = realloc(j->msg, j->msglen + n);
	if (!m) {
		strcpy(line, "out of memory");
		n = sizeof("out of memory");
		m = realloc(j->msg, j->msglen + n);
		if (!m)
			return;		/* not counted: nothing to say */
	}
	memcpy(m + j->msglen, line, n);
	j->msg = m;
	j->msglen += n;
	j->nmsg++;
}

/* a hole (chunk-based files): zeros into the digest, a hole in the
 * extracted file (its size is set at the end) */
static int hole_fn(struct feed *f, size_t len)
{
	static const uint8_t zeros[65536];

	for (size_t k = len; f->md && k; ) {
		size_t n = k < sizeof(zeros) ? k : sizeof(zeros);

		EVP_DigestUpdate(f->md, zeros, n);
		k -= n;
	}
	if (f->j->fd >= 0 && lseek(f->j->fd, (off_t)len, SEEK_CUR) < 0) {
		snprintf(f->img->err, sizeof(f->img->err),
			 "cannot seek in the extracted file: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}

static int data_fn(void *ctx, const uint8_t *buf, size_t len)
{
	struct feed *f = ctx;

	if (!buf)
		return hole_fn(f, len);
	if (f->md)
		EVP_DigestUpdate(f->md, buf, len);
	for (size_t done = 0; f->j->fd >= 0 && done < len; ) {
		ssize_t r = write(f->j->fd, buf + done, len - done);

		if (r < 0) {
			snprintf(f->img->err, sizeof(f->img->err),
				 "cannot write the extracted file: %s", strerror(errno));
			return -EIO;
		}
		done += (size_t)r;
	}
	return 0;
}

static void check_file(struct erofs_fpool *p, struct erofs_img *img,
		       EVP_MD_CTX **ctx, struct erofs_fjob *j)
{
	struct feed f = { .img = img, .j = j };
	uint8_t md[32];
	int ret;

	if (j->want && j->have_digest && !j->digest_bad) {
		if (!*ctx)
			*ctx = EVP_MD_CTX_new();
		if (*ctx && EVP_DigestInit_ex2(*ctx, p->sha ? p->sha : EVP_sha256(),
					       NULL))
			f.md = *ctx;
		else
			job_problem(j, "cannot set up SHA-256 (out of memory)");
	}
	ret = erofs_read_data(img, &j->ino, data_fn, &f, &j->phys);
	if (ret)
		job_problem(j, "%s", img->err);
	/* a file ending in a hole gets its size */
	if (j->fd >= 0 && !ret && ftruncate(j->fd, (off_t)j->ino.size))
		job_problem(j, "cannot set the size of the extracted file: %s",
			    strerror(errno));
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	if (j->want && !j->have_digest)
		job_problem(j, "inode %" PRIu64 ": no fingerprint xattr %s",
			    j->ino.nid, j->digest_name);
	else if (j->want && j->digest_bad)
		job_problem(j, "inode %" PRIu64 ": fingerprint xattr %s is malformed (not 'sha256:' + 32 bytes, or twice)",
			    j->ino.nid, j->digest_name);
	else if (f.md && !ret) {
		EVP_DigestFinal_ex(f.md, md, NULL);
		if (memcmp(md, j->digest, 32))
			job_problem(j, "inode %" PRIu64 ": fingerprint %s does not match the content's SHA-256",
				    j->ino.nid, j->digest_name);
		else
			j->verified = true;
	}
}

static void report(struct erofs_fpool *p, const struct erofs_fjob *j)
{
	const char *m = j->msg;

	for (unsigned int i = 0; i < j->nmsg; i++, m += strlen(m) + 1)
		fsf_err(p->log, "%s: %s", j->path, m);
	p->st->errors += j->nmsg;
	p->st->logical += j->ino.size;
	p->st->physical += j->phys;
	p->st->digests += j->verified;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct erofs_fpool *p = w->pool;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		uint64_t first, n;
		bool wake = false;

		while (p->take == p->tail && !p->quit) {
			p->idle++;
			pthread_cond_wait(&p->work, &p->mu);
			p->idle--;
		}
		if (p->take == p->tail)
			break;
		/* a share of what waits, so the other workers get some */
		n = (p->tail - p->take) / (p->nworkers + 1);
		n = n < 1 ? 1 : n > TAKE ? TAKE : n;
		first = p->take;
		p->take += n;
		pthread_mutex_unlock(&p->mu);
		for (uint64_t i = first; i < first + n; i++)
			check_file(p, &w->img, &w->md, &p->q[i % QUEUE]);
		pthread_mutex_lock(&p->mu);
		for (uint64_t i = first; i < first + n; i++)
			p->q[i % QUEUE].done = true;
		/* the walk is woken once every job it waits for is done */
		if (p->walk_waits) {
			uint64_t i = p->head;

			while (i <= p->wanted && p->q[i % QUEUE].done)
				i++;
			wake = i > p->wanted;
		}
		if (wake)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static void retire(struct erofs_fjob *j)
{
	free(j->msg);
	free(j->path);
}

/* report the files checked at the head of the queue, waiting until at
 * most LEAVE are queued */
static void reap(struct erofs_fpool *p, uint64_t leave)
{
	pthread_mutex_lock(&p->mu);
	for (;;) {
		uint64_t n = 0;

		/* the jobs done at the head are the walk's alone: reported
		 * without the lock */
		while (p->head + n < p->tail && p->q[(p->head + n) % QUEUE].done)
			n++;
		if (n) {
			pthread_mutex_unlock(&p->mu);
			for (uint64_t i = 0; i < n; i++) {
				report(p, &p->q[(p->head + i) % QUEUE]);
				retire(&p->q[(p->head + i) % QUEUE]);
			}
			pthread_mutex_lock(&p->mu);
			p->head += n;
			continue;
		}
		if (p->tail - p->head <= leave)
			break;
		/* to be woken when the jobs up to the one that brings the
		 * queue down to LEAVE are done */
		p->wanted = p->tail - leave - 1;
		p->walk_waits = true;
		if (p->idle)
			pthread_cond_broadcast(&p->work);
		pthread_cond_wait(&p->done, &p->mu);
		p->walk_waits = false;
	}
	pthread_mutex_unlock(&p->mu);
}

int erofs_fpool_start(struct erofs_fpool **pool, struct erofs_img *img,
		      unsigned int workers, const struct fsf_log *log,
		      struct erofs_check_stats *st)
{
	struct erofs_fpool *p = calloc(1, sizeof(*p));

	*pool = p;
	if (!p)
		return -ENOMEM;
	p->img = img;
	p->log = log;
	p->st = st;
	p->sha = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (workers < 2)
		return 0;
	/* the packed inode is shared by the clones: decoded now.  When it
	 * is unreadable, files are checked inline, so its problem is
	 * reported where a single thread reports it. */
	if (img->packed_nid && erofs_packed_load(img)) {
		img->packed_err = 0;
		return 0;
	}
	p->q = calloc(QUEUE, sizeof(*p->q));
	p->w = calloc(workers, sizeof(*p->w));
	if (!p->q || !p->w)
		goto inline_only;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	for (unsigned int i = 0; i < workers; i++) {
		struct worker *w = &p->w[i];

		w->pool = p;
		erofs_img_clone(&w->img, img);
		if (pthread_create(&w->th, NULL, worker_main, w))
			break;
		w->started = true;
		p->nworkers++;
	}
	if (p->nworkers)
		return 0;
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->mu);
inline_only:
	free(p->q);
	free(p->w);
	p->q = NULL;
	p->w = NULL;
	return 0;
}

int erofs_fpool_submit(struct erofs_fpool *p, const struct erofs_fjob *job)
{
	struct erofs_fjob *j;

	if (!p->nworkers) {
		struct erofs_fjob one = *job;

		check_file(p, p->img, &p->md, &one);
		report(p, &one);
		free(one.msg);
		return 0;
	}
	if (p->tail - p->head >= QUEUE)
		reap(p, LOW);
	j = &p->q[p->tail % QUEUE];
	*j = *job;
	j->path = strdup(job->path);
	if (!j->path)
		return -ENOMEM;
	pthread_mutex_lock(&p->mu);
	p->tail++;
	if (p->idle && p->tail - p->take >= BATCH)
		pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

void erofs_fpool_drain(struct erofs_fpool *p)
{
	if (p && p->nworkers)
		reap(p, 0);
}

void erofs_fpool_stop(struct erofs_fpool *p)
{
	if (!p)
		return;
	if (p->nworkers) {
		reap(p, 0);
		pthread_mutex_lock(&p->mu);
		p->quit = true;
		pthread_cond_broadcast(&p->work);
		pthread_mutex_unlock(&p->mu);
		for (unsigned int i = 0; i < p->nworkers; i++) {
			pthread_join(p->w[i].th, NULL);
			erofs_img_close(&p->w[i].img);
			EVP_MD_CTX_free(p->w[i].md);
		}
		pthread_cond_destroy(&p->done);
		pthread_cond_destroy(&p->work);
		pthread_mutex_destroy(&p->mu);
	}
	EVP_MD_CTX_free(p->md);
	EVP_MD_free(p->sha);
	free(p->q);
	free(p->w);
	free(p);
}
