/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LD_PRELOAD interposer for the hostile-peer test: each memory region an unmodified verbs
 * program registers is appended to $HOSTILE_MRLOG as one line
 *   mr <addr> <length> <access> <lkey> <rkey>
 * (hex address, decimal rest), so that the test knows which bytes of the process an attack may
 * legitimately reach and compares every other byte around them through /proc/PID/mem.
 * The registration itself is the library's (dlsym RTLD_NEXT); nothing else changes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

/* verbs.h makes ibv_reg_mr a macro; the exported functions are what programs link. */
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);
struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access);

static void
hostile_mrlog(const struct ibv_mr *mr, uint64_t iova, size_t length, unsigned int access)
{
	const char *path = getenv("HOSTILE_MRLOG");
	FILE *f;

	if (mr == NULL || path == NULL || *path == '\0')
		return;
	f = fopen(path, "a");
	if (f == NULL)
		return;
	fprintf(f, "mr 0x%llx %zu %u %u %u\n", (unsigned long long)iova, length, access, mr->lkey,
		mr->rkey);
	fclose(f);
}

struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	struct ibv_mr *(*real)(struct ibv_pd *, void *, size_t, int) =
		(struct ibv_mr * (*)(struct ibv_pd *, void *, size_t, int))
			dlsym(RTLD_NEXT, "ibv_reg_mr");
	struct ibv_mr *mr = real(pd, addr, length, access);

	hostile_mrlog(mr, (uintptr_t)addr, length, (unsigned int)access);
	return mr;
}

struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
	struct ibv_mr *(*real)(struct ibv_pd *, void *, size_t, uint64_t, unsigned int) =
		(struct ibv_mr * (*)(struct ibv_pd *, void *, size_t, uint64_t, unsigned int))
			dlsym(RTLD_NEXT, "ibv_reg_mr_iova2");
	struct ibv_mr *mr = real(pd, addr, length, iova, access);

	hostile_mrlog(mr, iova, length, access);
	return mr;
}

struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	struct ibv_mr *(*real)(struct ibv_pd *, void *, size_t, uint64_t, int) =
		(struct ibv_mr * (*)(struct ibv_pd *, void *, size_t, uint64_t, int))
			dlsym(RTLD_NEXT, "ibv_reg_mr_iova");
	struct ibv_mr *mr = real(pd, addr, length, iova, access);

	hostile_mrlog(mr, iova, length, (unsigned int)access);
	return mr;
}
