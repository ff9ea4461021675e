// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 4: file contents.  Worker threads take regular files in layout
 * order from a shared counter; each reads its file once, feeds SHA-256 (for
 * the fingerprint xattr) and writes whole blocks to the addresses fixed by
 * the layout.  An inline tail is written straight to its place after the
 * inode.  No position depends on which worker did what.
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

#define CHUNK (1u << 20)

struct data_pass {
	struct erofs_build *b;
	struct erofs_node **files;
	size_t nfiles;
	atomic_size_t next;
	atomic_size_t done;
	atomic_int error;		/* first negative errno */
};

/* "<dir>/<dir>/<name>" relative to the source directory */
static int node_relpath(const struct erofs_node *n, char *buf, size_t size)
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
	if (!len)
		return -EINVAL;
	return 0;
}

static int fail(struct data_pass *dp, const char *path, const char *what,
		int err)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&dp->error, &expected, err))
		fsf_err(dp->b->log, "%s %s/%s: %s", what, dp->b->opts->source,
			path, strerror(-err));
	return err;
}

static int copy_file(struct data_pass *dp, struct erofs_node *n, uint8_t *buf,
		     EVP_MD_CTX *md)
{
	struct erofs_build *b = dp->b;
	const unsigned int bs = b->blksz;
	uint64_t total = 0, dst = n->blkaddr * bs;
	char path[PATH_MAX];
	int fd, ret = node_relpath(n, path, sizeof(path));
	bool eof = false;

	if (ret)
		return fail(dp, n->name, "path too long:", ret);
	fd = openat(b->src_fd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail(dp, path, "cannot open", -errno);
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (n->has_digest)
		EVP_DigestInit_ex(md, EVP_sha256(), NULL);

	while (!eof) {
		size_t fill = 0;

		while (fill < CHUNK) {
			ssize_t r = read(fd, buf + fill, CHUNK - fill);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				ret = fail(dp, path, "cannot read", -errno);
				goto out;
			}
			if (r == 0) {
				eof = true;
				break;
			}
			fill += (size_t)r;
		}
		total += fill;
		if (total > n->size) {
			ret = fail(dp, path, "file grew while reading", -EAGAIN);
			goto out;
		}
		if (n->has_digest)
			EVP_DigestUpdate(md, buf, fill);
		if (!eof || total < n->size) {
			/* a full chunk is whole blocks */
			ret = fsf_dev_pwrite(&b->dev, buf, fill, dst);
			dst += fill;
		} else {
			size_t whole = fill / bs * bs, rest = fill - whole;

			ret = whole ? fsf_dev_pwrite(&b->dev, buf, whole, dst) : 0;
			dst += whole;
			if (!ret && rest && n->inline_size) {
				uint64_t at = n->nid * EROFS_SLOT_SIZE +
					      (n->extended ? 64u : 32u) +
					      n->xattr_isize;

				ret = fsf_dev_pwrite(&b->dev, buf + whole,
						     rest, at);
			} else if (!ret && rest) {
				memset(buf + fill, 0, bs - rest);
				ret = fsf_dev_pwrite(&b->dev, buf + whole, bs,
						     dst);
			}
		}
		if (ret) {
			fail(dp, path, "cannot write data of", ret);
			goto out;
		}
	}
	if (total != n->size) {
		ret = fail(dp, path, "file shrank while reading", -EAGAIN);
		goto out;
	}
	if (n->has_digest)
		EVP_DigestFinal_ex(md, n->digest, NULL);
out:
	close(fd);
	return ret;
}

static void *worker(void *arg)
{
	struct data_pass *dp = arg;
	uint8_t *buf = aligned_alloc(4096, CHUNK + 65536);
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	if (!buf || !md) {
		fail(dp, "", "out of memory for", -ENOMEM);
		goto out;
	}
	for (;;) {
		size_t i = atomic_fetch_add(&dp->next, 1);

		if (i >= dp->nfiles || atomic_load(&dp->error))
			break;
		if (copy_file(dp, dp->files[i], buf, md))
			break;
		atomic_fetch_add(&dp->done, 1);
	}
out:
	EVP_MD_CTX_free(md);
	free(buf);
	return NULL;
}

int erofs_write_file_data(struct erofs_build *b)
{
	struct data_pass dp = { .b = b };
	unsigned int nw = b->opts->workers ? b->opts->workers : 1;
	pthread_t *tids;
	struct fsf_progress prog;
	unsigned int started = 0;

	dp.files = malloc(b->count * sizeof(*dp.files));
	tids = calloc(nw, sizeof(*tids));
	if (!dp.files || !tids) {
		free(dp.files);
		free(tids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *n = b->order[i];

		if (!n->master && S_ISREG(n->mode) && n->size)
			dp.files[dp.nfiles++] = n;
	}
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
	while (prog.enabled && atomic_load(&dp.done) < dp.nfiles &&
	       !atomic_load(&dp.error)) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		fsf_progress_update(&prog, atomic_load(&dp.done), dp.nfiles);
		nanosleep(&ts, NULL);
	}
	for (unsigned int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	fsf_progress_done(&prog);
	free(tids);
	free(dp.files);
	return atomic_load(&dp.error);
}
