/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What librdmacm exports and this replacement does not do: SRQs on ids, migrating ids
 * between channels, ECE and rsockets. Each fails with EOPNOTSUPP
 * (-1, or NULL / a negative length), so a program that needs one says so and none falls
 * through to the real library with our ids. Programs do not probe these as they probe
 * optional verbs, so each also says what is missing on stderr, once per function: errno
 * alone reads like a limit of the device.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

/* The parameters are the ABI's: a stub has no use for them. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

static void
unsupported(const char *fn, const char *what, bool *said)
{
	if (!__atomic_exchange_n(said, true, __ATOMIC_RELAXED))
		fprintf(stderr, "droce-rdmacm: %s: %s not supported by droce (EOPNOTSUPP)\n", fn,
			what);
	errno = EOPNOTSUPP;
}

#define FAIL_AS(what, ret) \
	do { \
		static bool said_; \
		unsupported(__func__, what, &said_); \
		return (ret); \
	} while (0)
#define FAIL_SRQ(ret) FAIL_AS("SRQs on rdma_cm ids are", ret)
#define FAIL_ECE(ret) FAIL_AS("ECE is", ret)
#define FAIL_RS(ret)  FAIL_AS("rsockets are", ret)

int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	FAIL_SRQ(-1);
}
int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	FAIL_SRQ(-1);
}
void
rdma_destroy_srq(struct rdma_cm_id *id)
{
}
int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	FAIL_AS("moving an id to another channel is", -1);
}
int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	return 0;
} /* ESTABLISHED comes from the RTU here */
int
rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	FAIL_ECE(-1);
}
int
rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	FAIL_ECE(-1);
}
int
rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	FAIL_ECE(-1);
}

int
rsocket(int domain, int type, int protocol)
{
	FAIL_RS(-1);
}
int
rbind(int s, const struct sockaddr *a, socklen_t l)
{
	FAIL_RS(-1);
}
int
rlisten(int s, int backlog)
{
	FAIL_RS(-1);
}
int
raccept(int s, struct sockaddr *a, socklen_t *l)
{
	FAIL_RS(-1);
}
int
rconnect(int s, const struct sockaddr *a, socklen_t l)
{
	FAIL_RS(-1);
}
int
rshutdown(int s, int how)
{
	FAIL_RS(-1);
}
int
rclose(int s)
{
	FAIL_RS(-1);
}
ssize_t
rrecv(int s, void *b, size_t n, int f)
{
	FAIL_RS(-1);
}
ssize_t
rrecvfrom(int s, void *b, size_t n, int f, struct sockaddr *a, socklen_t *l)
{
	FAIL_RS(-1);
}
ssize_t
rrecvmsg(int s, struct msghdr *m, int f)
{
	FAIL_RS(-1);
}
ssize_t
rsend(int s, const void *b, size_t n, int f)
{
	FAIL_RS(-1);
}
ssize_t
rsendto(int s, const void *b, size_t n, int f, const struct sockaddr *a, socklen_t l)
{
	FAIL_RS(-1);
}
ssize_t
rsendmsg(int s, const struct msghdr *m, int f)
{
	FAIL_RS(-1);
}
ssize_t
rread(int s, void *b, size_t n)
{
	FAIL_RS(-1);
}
ssize_t
rreadv(int s, const struct iovec *v, int n)
{
	FAIL_RS(-1);
}
ssize_t
rwrite(int s, const void *b, size_t n)
{
	FAIL_RS(-1);
}
ssize_t
rwritev(int s, const struct iovec *v, int n)
{
	FAIL_RS(-1);
}
int
rpoll(struct pollfd *fds, nfds_t n, int t)
{
	FAIL_RS(-1);
}
int
rselect(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t)
{
	FAIL_RS(-1);
}
int
rgetpeername(int s, struct sockaddr *a, socklen_t *l)
{
	FAIL_RS(-1);
}
int
rgetsockname(int s, struct sockaddr *a, socklen_t *l)
{
	FAIL_RS(-1);
}
int
rsetsockopt(int s, int lv, int o, const void *v, socklen_t l)
{
	FAIL_RS(-1);
}
int
rgetsockopt(int s, int lv, int o, void *v, socklen_t *l)
{
	FAIL_RS(-1);
}
int
rfcntl(int s, int cmd, ...)
{
	FAIL_RS(-1);
}
off_t
riomap(int s, void *b, size_t n, int p, int f, off_t o)
{
	FAIL_RS(-1);
}
int
riounmap(int s, void *b, size_t n)
{
	FAIL_RS(-1);
}
size_t
riowrite(int s, const void *b, size_t n, off_t o, int f)
{
	FAIL_RS(0);
}
