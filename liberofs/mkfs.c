// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * erofs_mkfs(): the passes in order.  Nothing is written before the whole
 * tree has been read and laid out, the superblock is written last, and a
 * regular-file image is only renamed into place once it is complete.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uuid.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

void erofs_mkfs_opts_init(struct erofs_mkfs_opts *o)
{
	long page = sysconf(_SC_PAGESIZE);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int bits = 12;

	memset(o, 0, sizeof(*o));
	while (page > 0 && (1L << bits) < page && bits < 16)
		bits++;
	o->blkszbits = bits;
	o->build_time = (int64_t)time(NULL);
	o->force_uid = o->force_gid = -1;
	o->oci_layer = -1;
	o->xattr_tolerance = 2;
	o->workers = cpus > 0 ? (unsigned int)cpus : 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds (user + system) of every thread so far */
static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Run one pass and report its duration (wall, and CPU of all threads: on
 * a loaded machine the wall time says little) at the verbose level. */
static int timed(struct erofs_build *b, const char *what,
		 int (*pass)(struct erofs_build *))
{
	double t0 = now_s(), c0 = cpu_s();
	int ret = pass(b);

	fsf_info(b->log, "%-24s %8.3f s  cpu %8.3f s", what, now_s() - t0,
		 cpu_s() - c0);
	return ret;
}

static int write_flat(struct erofs_build *b)
{
	int ret = timed(b, "file data", erofs_write_file_data);

	return ret ? ret : timed(b, "directories, symlinks",
				 erofs_write_dirs_and_symlinks);
}

struct flat_thread {
	struct erofs_build *b;
	int ret;
};

static void *flat_run(void *arg)
{
	struct flat_thread *t = arg;

	t->ret = write_flat(t->b);
	if (!t->ret)
		t->ret = timed(t->b, "metadata, early chunks",
			       erofs_meta_write_early);
	return NULL;
}

/*
 * The uncompressed file data, the directories and symlinks, then the
 * compressed files.  With two workers or more, the first two run on a
 * thread of their own beside the compressed files: all their addresses
 * were fixed by the layout (compressed data follows every other block),
 * each pass writes only its own files' blocks and records, so the image
 * is the same; what is saved is the cores idle at the end of the file
 * data pass and during the serial directory pass.  That thread then
 * writes the metadata chunks that hold few compressed records
 * (metadata.c), which takes most of the metadata pass off the end.
 */
static int write_data(struct erofs_build *b)
{
	struct flat_thread t = { .b = b };
	pthread_t tid;
	int ret;

	if (!b->opts->nzcfgs || b->opts->workers < 2 ||
	    pthread_create(&tid, NULL, flat_run, &t) != 0) {
		ret = write_flat(b);
		return ret ? ret : timed(b, "compressed files",
					 erofs_write_compressed);
	}
	ret = timed(b, "compressed files", erofs_write_compressed);
	pthread_join(tid, NULL);
	return t.ret ? t.ret : ret;
}

static int set_size(struct erofs_build *b)
{
	/* in place: nothing of the old image may show through a gap */
	if (b->opts->in_place) {
		int ret = fsf_dev_set_size(&b->dev, 0);

		if (ret)
			return ret;
	}
	return fsf_dev_set_size(&b->dev, b->total_blocks * b->blksz);
}

static int commit(struct erofs_build *b)
{
	return fsf_dev_commit(&b->dev);
}

/* --ungzip=FILE: the tar reader's decoded stream written to FILE, which
 * takes its name once the stream has been read to its end */
static int dump_write(struct erofs_build *b, const void *buf, size_t len)
{
	int ret = fsf_dev_pwrite(&b->dump, buf, len, b->dump_len);

	b->dump_len += len;
	return ret;
}

static int dump_end(struct erofs_build *b)
{
	int ret = fsf_dev_set_size(&b->dump, b->dump_len);

	return ret ? ret : fsf_dev_commit(&b->dump);
}

/* Do paths A and B name one file (the same string, or both exist as one
 * inode)?  B may be NULL or "-" (standard input). */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!b || !strcmp(b, "-"))
		return false;
	if (!strcmp(a, b))
		return true;
	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static int check_opts(const struct erofs_mkfs_opts *o, const struct fsf_log *log)
{
	if (o->blkszbits < 9 || o->blkszbits > 16) {
		fsf_err(log, "invalid block size %u: must be a power of two from 512 to 65536",
			1u << (o->blkszbits & 31));
		return -EINVAL;
	}
	if (strnlen(o->label, sizeof(o->label)) > 15) {
		fsf_err(log, "volume label is longer than 15 bytes");
		return -EINVAL;
	}
	if (o->nzcfgs > EROFS_MKFS_MAX_ZCFGS) {
		fsf_err(log, "%u compression configurations (at most %d)",
			o->nzcfgs, EROFS_MKFS_MAX_ZCFGS);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < o->nzcfgs; i++) {
		if (o->zcfgs[i].compr == EROFS_COMPR_NONE ||
		    o->zcfgs[i].compr > EROFS_COMPR_ZSTD) {
			fsf_err(log, "compression configuration %u has no algorithm", i);
			return -EINVAL;
		}
	}
	if (o->compress_hints && !o->nzcfgs) {
		fsf_err(log, "--compress-hints needs -z");
		return -EINVAL;
	}
	if (o->nzcfgs && o->pcluster_size &&
	    (o->pcluster_size % (1u << o->blkszbits) ||
	     o->pcluster_size > Z_EROFS_PCLUSTER_MAX_SIZE ||
	     o->pcluster_size >> o->blkszbits > 1024)) {
		fsf_err(log, "physical cluster size %u must be a multiple of the block size (%u) of at most %u bytes and 1024 blocks",
			o->pcluster_size, 1u << o->blkszbits,
			Z_EROFS_PCLUSTER_MAX_SIZE);
		return -EINVAL;
	}
	if (o->packed_pcluster && o->packed_pcluster % (1u << o->blkszbits)) {
		fsf_err(log, "pcluster size %u of the packed inode is not a multiple of the block size %u",
			o->packed_pcluster, 1u << o->blkszbits);
		return -EINVAL;
	}
	if (o->max_extent_bytes && o->max_extent_bytes < (1u << o->blkszbits)) {
		fsf_err(log, "--max-extent-bytes %u is less than the block size %u",
			o->max_extent_bytes, 1u << o->blkszbits);
		return -EINVAL;
	}
	if (o->chunk_size &&
	    ((o->chunk_size & (o->chunk_size - 1)) ||
	     o->chunk_size < (1u << o->blkszbits) ||
	     o->chunk_size > (1ull << (o->blkszbits + EROFS_CHUNK_FORMAT_BLKBITS_MASK)))) {
		fsf_err(log, "chunk size %llu must be a power of two from the block size (%u) to %llu",
			(unsigned long long)o->chunk_size, 1u << o->blkszbits,
			1ull << (o->blkszbits + EROFS_CHUNK_FORMAT_BLKBITS_MASK));
		return -EINVAL;
	}
	if (!o->nzcfgs &&
	    (o->ztailpacking || o->fragments || o->dedupe)) {
		fsf_err(log, "-E ztailpacking, fragments, all-fragments and dedupe need -z");
		return -EINVAL;
	}
	if (o->tar_mode == EROFS_TAR_INDEX && o->blkszbits != 9) {
		fsf_err(log, "--tar=i maps 512-byte tar blocks: the block size must be 512");
		return -EINVAL;
	}
	if (o->blobdev && !o->chunk_size) {
		fsf_err(log, "--blobdev needs --chunksize");
		return -EINVAL;
	}
	if (o->tar_dump && (o->tar_mode == EROFS_TAR_NONE || o->oci ||
			    o->tar_codec == EROFS_TAR_PLAIN)) {
		fsf_err(log, "a copy of the decompressed archive (--ungzip=FILE, --unxz=FILE, --unzstd=FILE) needs --tar");
		return -EINVAL;
	}
	if (o->tar_dump && (same_file(o->tar_dump, o->image) ||
			    same_file(o->tar_dump, o->source) ||
			    same_file(o->tar_dump, o->blobdev))) {
		fsf_err(log, "%s: the copy of the decompressed archive cannot replace the image, the archive or the blob device",
			o->tar_dump);
		return -EINVAL;
	}
	if (o->build_time < 0) {
		fsf_err(log, "build time %lld is before 1970", (long long)o->build_time);
		return -EINVAL;
	}
	return 0;
}

int erofs_mkfs(const struct erofs_mkfs_opts *o, const struct fsf_log *log,
	       struct erofs_mkfs_stats *stats)
{
	struct erofs_build b = { .opts = o, .log = log, .src_fd = -1, .packed_fd = -1,
				 .tail_fd = -1,
				 .data_fd = { -1, -1 } };
	unsigned int flags = o->in_place ? FSF_DEV_OVERWRITE : FSF_DEV_REPLACE;
	int ret = check_opts(o, log);

	if (ret)
		return ret;
	b.blksz = 1u << o->blkszbits;
	while (o->chunk_size && (1ull << b.chunkbits) < o->chunk_size)
		b.chunkbits++;
	b.chunk_indexes = o->blobdev || o->tar_mode == EROFS_TAR_INDEX;
	b.epoch = o->build_time;
	b.dev.fd = -1;
	b.blob.fd = -1;
	b.dump.fd = -1;
	if (o->uuid_mode == EROFS_UUID_GIVEN)
		memcpy(b.uuid, o->uuid, 16);
	else
		uuid_generate(b.uuid);

	/* a bad hints file is told before the tree is read */
	ret = erofs_zhints_load(&b);
	if (!ret)	/* -C and the hints' pclusters, for the plan */
		ret = erofs_compress_settings(&b);
	if (ret) {
		erofs_zhints_free(&b);
		return ret;
	}

	b.from_tar = o->tar_mode != EROFS_TAR_NONE;
	if (!b.from_tar)
		b.src_fd = open(o->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!b.from_tar && b.src_fd < 0) {
		ret = -errno;
		fsf_err(log, "cannot open source directory %s: %s", o->source,
			strerror(errno));
		erofs_zhints_free(&b);
		return ret;
	}
	if (o->force)
		flags |= FSF_DEV_FORCE;
	if (o->dry_run)
		flags |= FSF_DEV_DRY_RUN;
	ret = fsf_dev_open_output(&b.dev, o->image, flags, log);
	if (ret)
		goto out_src;
	if (o->blobdev) {
		ret = fsf_dev_open_output(&b.blob, o->blobdev, flags, log);
		if (ret)
			goto out;
	}
	if (o->tar_dump && !o->dry_run) {
		ret = fsf_dev_open_output(&b.dump, o->tar_dump,
					  FSF_DEV_REPLACE | (o->force ? FSF_DEV_FORCE : 0),
					  log);
		if (ret)
			goto out;
		b.tar_copy = dump_write;
		b.tar_copy_end = dump_end;
	}

	ret = timed(&b, b.from_tar ? "tar" : "scan",
		    b.from_tar ? erofs_tar_scan : erofs_scan);
	if (!ret)
		ret = timed(&b, "xattrs", erofs_xattrs_prepare);
	if (!ret)
		ret = timed(&b, "compression plan", erofs_compress_plan);
	if (!ret)
		ret = timed(&b, "layout", erofs_layout);
	if (ret || o->dry_run)
		goto out;

	ret = set_size(&b);
	if (!ret)
		ret = write_data(&b);
	if (!ret && (b.chunkbits || erofs_tar_index(&b)))
		ret = timed(&b, "chunked files", erofs_write_chunked);
	if (!ret)	/* compressed and chunked data made it longer */
		ret = fsf_dev_set_size(&b.dev, b.total_blocks * b.blksz);
	if (!ret && o->blobdev)
		ret = fsf_dev_set_size(&b.blob, b.dev_blocks * b.blksz);
	if (!ret && o->blobdev)	/* the device before the image naming it */
		ret = fsf_dev_commit(&b.blob);
	if (!ret)
		ret = timed(&b, "metadata, superblock", erofs_write_metadata);
	if (!ret)
		ret = timed(&b, "sync, rename", commit);
	if ((ret == -ENOSPC || ret == -EDQUOT) && b.dev.tmp_path)
		fsf_err(log, "%s is left untouched; free %llu bytes beside it or use --in-place to overwrite it directly",
			o->image, (unsigned long long)b.total_blocks * b.blksz);
out:
	if (!ret && stats) {
		memset(stats, 0, sizeof(*stats));
		stats->blocks = b.total_blocks;
		stats->inodes = b.ninodes;
		stats->meta_bytes = b.meta_end;
		stats->data_bytes = (b.total_blocks - b.data_blkaddr) * b.blksz;
		for (size_t i = 0; i < b.count; i++) {
			stats->fingerprints += b.order[i]->has_digest;
			stats->compressed += b.order[i]->compressed &&
					     !b.order[i]->master;
			stats->chunked += b.order[i]->chunked &&
					  !b.order[i]->master;
		}
		stats->hole_chunks = b.hole_chunks;
		stats->dedup_chunks = b.dedup_chunks;
		stats->dev_blocks = b.devt_off ? b.dev_blocks : 0;
		memcpy(stats->uuid, b.uuid, 16);
	}
	if (o->blobdev)
		fsf_dev_close(&b.blob);
	if (b.dump.fd >= 0)
		fsf_dev_close(&b.dump);
	fsf_dev_close(&b.dev);
	erofs_meta_free(&b);
	erofs_frag_tables_free(&b);
	erofs_tail_spool_close(&b);
	erofs_seg_free(&b);
	erofs_tree_free(&b);
out_src:
	erofs_zhints_free(&b);
	if (b.src_fd >= 0)
		close(b.src_fd);
	for (int i = 0; i < 2; i++)
		if (b.data_fd[i] >= 0)
			close(b.data_fd[i]);
	return ret;
}
