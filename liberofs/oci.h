/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Local OCI image layouts, private to liberofs: the layers of the image
 * that the options select, found through oci-layout, index.json, nested
 * image indexes and the image manifest, every JSON blob verified against
 * its descriptor's digest and size.  Nothing is ever fetched.
 */
#ifndef LIBEROFS_OCI_H
#define LIBEROFS_OCI_H

#include <stddef.h>
#include <stdint.h>

#include "erofs/mkfs.h"
#include "fsforge/log.h"
#include "tar.h"

/* largest index.json, image index or manifest read (OCI's advice for
 * registries is 4 MiB) */
#define OCI_JSON_MAX (4u << 20)
/* image indexes nested under index.json */
#define OCI_MAX_NESTING 8

struct oci_layer {
	char digest[72];		/* "sha256:" and 64 hex digits */
	uint8_t sha[32];
	uint64_t size;
	enum tar_codec codec;
	char *path;			/* DIR/blobs/sha256/HEX */
	size_t index;			/* 0-based, in the manifest */
};

/* the layers to read, in order (one with layer= or blob=, else all);
 * errors are reported on LOG, one line naming the object */
int oci_select_layers(const struct erofs_mkfs_opts *o,
		      const struct fsf_log *log, struct oci_layer **out,
		      size_t *n);
void oci_layers_free(struct oci_layer *l, size_t n);

#endif
