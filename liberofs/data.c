// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 4: file contents.  Regular files are cut, in layout order, into
 * batches whose data blocks are contiguous (up to BATCH bytes, or one big
 * file).  Worker threads take batches from a shared counter; a worker reads
 * each file of its batch once, feeds SHA-256 for the fingerprint xattr and
 * assembles the batch's blocks in memory, then writes them with a single
 * pwrite.  Few large writes keep the workers from queueing on the image
 * file's lock.  Inline tails are kept for the metadata pass.  Every address
 * comes from the layout, so no byte depends on which worker did what.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "erofs/erofs_fs.h"
#include "fsforge/progress.h"
#include "internal.h"

#define BATCH (4u << 20)	/* bytes of data per batch */
#define CHUNK (1u << 20)	/* read size for files larger than a batch */

struct batch {
	size_t first, end;	/* files[first..end) */
	uint64_t blkaddr;	/* first data block of the batch */
	uint64_t bytes;		/* data bytes (whole blocks) */
};

struct data_pass {
	struct erofs_build *b;
	struct erofs_node **files;
	size_t nfiles;
	struct batch *batches;
	size_t nbatches;
	atomic_size_t next;
	atomic_size_t done;		/* files finished, for progress */
	atomic_int error;		/* first negative errno */
};

/* "<dir>/<dir>/<name>" relative to the source directory */
int erofs_node_relpath(const struct erofs_node *n, char *buf, size_t size)
{
	const struct erofs_node *chain[PATH_MAX / 2];
	size_t depth = 0, len = 0;

	for (; n->parent != n; n = n->parent) {
		if (depth == sizeof(chain) / sizeof(chain[0]))
			return -ENAMETOOLONG;
		chain[depth++] = n;
	}
	while (depth--) {
		size_t l = chain[depth]->name_len;

		if (len + l + 2 > size)
			return -ENAMETOOLONG;
		memcpy(buf + len, chain[depth]->name, l);
		len += l;
		buf[len++] = depth ? '/' : '\0';
	}
	return len ? 0 : -EINVAL;
}

static void erofs_src_window(const struct erofs_build *b,
			     const struct erofs_node *n, struct erofs_src *s);

static int fail(struct data_pass *dp, const char *path, const char *what,
		int err)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&dp->error, &expected, err))
		fsf_err(dp->b->log, "%s %s/%s: %s", what, dp->b->opts->source,
			path, strerror(-err));
	return err;
}

static int open_source(struct data_pass *dp, const struct erofs_node *n,
		       char *path, size_t size, struct erofs_src *s)
{
	int fd, ret = erofs_node_relpath(n, path, size);

	if (ret)
		return fail(dp, n->name, "path too long:", ret);
	if (dp->b->from_tar) {
		erofs_src_window(dp->b, n, s);
		return 0;
	}
	/* O_NOATIME: reading the tree should not change it */
	fd = openat(dp->b->src_fd, path,
		    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = openat(dp->b->src_fd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail(dp, path, "cannot open", -errno);
	*s = (struct erofs_src){ .fd = fd };
	if (n->size > EROFS_FADV_MIN)
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

/* Read up to LEN bytes; returns bytes read (short only at EOF) or -errno. */
ssize_t erofs_read_full(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, buf + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* The content of a tar entry: a window of the tar or the spool file. */
static void erofs_src_window(const struct erofs_build *b,
			     const struct erofs_node *n, struct erofs_src *s)
{
	*s = (struct erofs_src){ .fd = b->data_fd[n->data_src], .shared = true,
				 .base = n->data_off, .len = n->size };
}

ssize_t erofs_src_pread(struct erofs_src *s, uint8_t *buf, size_t len,
			uint64_t off)
{
	size_t got = 0;

	if (s->shared) {
		if (off >= s->len)
			return 0;
		if (len > s->len - off)
			len = (size_t)(s->len - off);
		off += s->base;
	}
	while (got < len) {
		ssize_t r = pread(s->fd, buf + got, len - got,
				  (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

ssize_t erofs_src_read(struct erofs_src *s, uint8_t *buf, size_t len)
{
	ssize_t r;

	if (!s->shared)
		return erofs_read_full(s->fd, buf, len);
	r = erofs_src_pread(s, buf, len, s->pos);
	if (r > 0)
		s->pos += (uint64_t)r;
	return r;
}

/*
 * The end of a file is confirmed without a read of its own (one system
 * call per file: 64,478 on /usr/share): the last read asks for one byte
 * more than is left, and a regular file reads short only at its end, so
 * a read that stops exactly there ends it.  A read that stops short
 * before it is read on (as erofs_read_full); a tar window ends at its
 * length.
 */
ssize_t erofs_src_read_last(struct erofs_src *s, uint8_t *buf, size_t len)
{
	size_t got = 0;

	if (s->shared)
		return erofs_src_read(s, buf, len);
	while (got <= len) {
		ssize_t r = read(s->fd, buf + got, len + 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
		if (got == len)
			break;
	}
	return (ssize_t)got;
}

void erofs_src_close(struct erofs_src *s)
{
	if (!s->shared && s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* The file's last read returned R of the WANT bytes left (see
 * erofs_src_read_last). */
static int check_last(struct data_pass *dp, const char *path, ssize_t r,
		      size_t want)
{
	if (r < 0)
		return fail(dp, path, "cannot read", (int)r);
	if ((size_t)r < want)
		return fail(dp, path, "file shrank while reading", -EAGAIN);
	if ((size_t)r > want)
		return fail(dp, path, "file grew while reading", -EAGAIN);
	return 0;
}

int erofs_open_source(struct erofs_build *b, const struct erofs_node *n,
		      char *path, size_t size, struct erofs_src *s)
{
	int fd, ret = erofs_node_relpath(n, path, size);

	if (ret) {
		fsf_err(b->log, "%s: path too long", n->name);
		return ret;
	}
	if (b->from_tar) {
		erofs_src_window(b, n, s);
		return 0;
	}
	fd = openat(b->src_fd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = openat(b->src_fd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		fsf_err(b->log, "cannot open %s/%s: %s", b->opts->source, path,
			strerror(-ret));
		return ret;
	}
	*s = (struct erofs_src){ .fd = fd };
	return 0;
}

/* A file read whole into DST (its blocks, then its tail). */
static int read_small(struct data_pass *dp, struct erofs_node *n, uint8_t *dst,
		      EVP_MD_CTX *md)
{
	char path[PATH_MAX];
	struct erofs_src s;
	int ret = open_source(dp, n, path, sizeof(path), &s);
	ssize_t r;

	if (ret)
		return ret;
	/* the byte after it lands in the next file's place (read after
	 * it) or in the batch buffer's slack */
	r = erofs_src_read_last(&s, dst, n->size);
	ret = check_last(dp, path, r, n->size);
	erofs_src_close(&s);
	if (ret)
		return ret;
	if (n->has_digest) {
		EVP_DigestInit_ex(md, EVP_sha256(), NULL);
		EVP_DigestUpdate(md, dst, n->size);
		EVP_DigestFinal_ex(md, n->digest, NULL);
	}
	ret = erofs_place_tail(dp->b, n, dst + n->nblocks * dp->b->blksz);
	if (ret)
		return fail(dp, path, "cannot write the inline tail of", ret);
	return 0;
}

/* A file bigger than a batch: streamed in CHUNK reads. */
static int copy_large(struct data_pass *dp, struct erofs_node *n, uint8_t *buf,
		      EVP_MD_CTX *md)
{
	struct erofs_build *b = dp->b;
	const unsigned int bs = b->blksz;
	uint64_t done = 0, dst = n->blkaddr * bs;
	char path[PATH_MAX];
	struct erofs_src s;
	int ret = open_source(dp, n, path, sizeof(path), &s);

	if (ret)
		return ret;
	if (n->has_digest)
		EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	while (done < n->size && !ret) {
		size_t want = n->size - done <= CHUNK ? (size_t)(n->size - done) : CHUNK;
		/* the last read confirms the end (buf has room past CHUNK) */
		ssize_t r = want == n->size - done ?
			    erofs_src_read_last(&s, buf, want) :
			    erofs_src_read(&s, buf, want);
		size_t whole, rest;

		if (r < 0 || (size_t)r != want) {
			ret = check_last(dp, path, r, want);
			break;
		}
		if (n->has_digest)
			EVP_DigestUpdate(md, buf, want);
		done += want;
		whole = want / bs * bs;
		rest = want - whole;
		if (rest && !n->inline_size) {	/* last block, zero-padded */
			memset(buf + want, 0, bs - rest);
			whole += bs;
		} else if (rest && (ret = erofs_place_tail(b, n, buf + whole))) {
			fail(dp, path, "cannot write the inline tail of", ret);
			break;
		}
		if (whole)
			ret = fsf_dev_pwrite(&b->dev, buf, whole, dst);
		dst += whole;
		if (ret)
			fail(dp, path, "cannot write data of", ret);
	}
	if (!ret && n->has_digest)
		EVP_DigestFinal_ex(md, n->digest, NULL);
	erofs_src_close(&s);
	return ret;
}

static int do_batch(struct data_pass *dp, const struct batch *bt, uint8_t *buf,
		    EVP_MD_CTX *md)
{
	const unsigned int bs = dp->b->blksz;
	int ret = 0;

	if (bt->end - bt->first == 1 && bt->bytes > BATCH) {
		ret = copy_large(dp, dp->files[bt->first], buf, md);
		atomic_fetch_add(&dp->done, 1);
		return ret;
	}
	for (size_t i = bt->first; i < bt->end && !ret; i++) {
		struct erofs_node *n = dp->files[i];
		uint8_t *dst = buf + (n->nblocks ? (n->blkaddr - bt->blkaddr) * bs : bt->bytes);
		uint64_t padded = n->nblocks * bs;

		ret = read_small(dp, n, dst, md);
		/* a tail in a data block of its own is zero-padded */
		if (!ret && !n->inline_size && padded > n->size)
			memset(dst + n->size, 0, padded - n->size);
		atomic_fetch_add(&dp->done, 1);
	}
	if (!ret && bt->bytes) {
		ret = fsf_dev_pwrite(&dp->b->dev, buf, bt->bytes, bt->blkaddr * bs);
		if (ret)
			fail(dp, dp->files[bt->first]->name, "cannot write data of", ret);
	}
	return ret;
}

static void *worker(void *arg)
{
	struct data_pass *dp = arg;
	/* a batch, plus room for one inline-only file read behind it */
	uint8_t *buf = aligned_alloc(4096, BATCH + 2u * 65536u);
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	if (!buf || !md) {
		fail(dp, "", "out of memory for", -ENOMEM);
		goto out;
	}
	for (;;) {
		size_t i = atomic_fetch_add(&dp->next, 1);

		if (i >= dp->nbatches || atomic_load(&dp->error))
			break;
		if (do_batch(dp, &dp->batches[i], buf, md))
			break;
	}
out:
	EVP_MD_CTX_free(md);
	free(buf);
	return NULL;
}

/* Cut the files into batches of contiguous data blocks. */
static int make_batches(struct data_pass *dp)
{
	const unsigned int bs = dp->b->blksz;
	struct batch cur = { 0 };

	dp->batches = malloc((dp->nfiles + 1) * sizeof(*dp->batches));
	if (!dp->batches)
		return -ENOMEM;
	for (size_t i = 0; i < dp->nfiles; i++) {
		struct erofs_node *n = dp->files[i];
		uint64_t bytes = n->nblocks * bs;

		/* close the batch if this file would overflow it; the
		 * inline-only tail of a file is read behind the blocks */
		if (cur.end > cur.first &&
		    (cur.bytes + bytes > BATCH || cur.end - cur.first >= 4096 ||
		     n->size > BATCH)) {
			dp->batches[dp->nbatches++] = cur;
			cur = (struct batch){ .first = i, .end = i };
		}
		if (cur.end == cur.first) {
			cur.first = cur.end = i;
			cur.bytes = 0;
			cur.blkaddr = n->blkaddr;
		}
		if (bytes && !cur.bytes)
			cur.blkaddr = n->blkaddr;
		if (bytes)	/* the span up to the end of this file */
			cur.bytes = (n->blkaddr + n->nblocks - cur.blkaddr) * bs;
		cur.end = i + 1;
	}
	if (cur.end > cur.first)
		dp->batches[dp->nbatches++] = cur;
	return 0;
}

int erofs_write_file_data(struct erofs_build *b)
{
	struct data_pass dp = { .b = b };
	unsigned int nw = b->opts->workers ? b->opts->workers : 1;
	pthread_t *tids;
	struct fsf_progress prog;
	unsigned int started = 0;
	int ret;

	dp.files = malloc(b->count * sizeof(*dp.files));
	tids = calloc(nw, sizeof(*tids));
	if (!dp.files || !tids) {
		free(dp.files);
		free(tids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *n = b->order[i];

		if (!n->master && S_ISREG(n->mode) && n->size &&
		    !n->compressed && !n->chunked)
			dp.files[dp.nfiles++] = n;
	}
	erofs_data_order(b, dp.files, dp.nfiles);
	ret = make_batches(&dp);
	if (ret)
		goto out;
	if (nw > dp.nbatches)
		nw = dp.nbatches ? (unsigned int)dp.nbatches : 1;
	atomic_init(&dp.next, 0);
	atomic_init(&dp.done, 0);
	atomic_init(&dp.error, 0);
	fsf_progress_init(&prog, "writing files", b->opts->progress);

	for (unsigned int i = 0; i < nw; i++) {
		if (pthread_create(&tids[i], NULL, worker, &dp) != 0)
			break;
		started++;
	}
	if (!started)
		worker(&dp);	/* no threads to be had: do it ourselves */
	while (prog.enabled && atomic_load(&dp.next) < dp.nbatches &&
	       !atomic_load(&dp.error)) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		fsf_progress_update(&prog, atomic_load(&dp.done), dp.nfiles);
		nanosleep(&ts, NULL);
	}
	for (unsigned int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	fsf_progress_done(&prog);
	ret = atomic_load(&dp.error);
out:
	free(dp.batches);
	free(tids);
	free(dp.files);
	return ret;
}
