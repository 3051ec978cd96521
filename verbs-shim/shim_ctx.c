/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Contexts, completion channels and asynchronous events. Channels and the async queue are
 * pipes: applications poll()/read() their fds exactly as with the kernel's uverbs fds, and a
 * pipe write of one pointer or one event is atomic (below PIPE_BUF).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_shim.h"
#include "droce_shim_abi.h"

static bool
shim_eager(void)
{
	const char *v = getenv("DROCE_SHIM_EAGER");

	return v != NULL && *v != '\0' && *v != '0';
}

struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct droce_shim_ctx *sc;
	struct verbs_context *v;
	int p[2];

	if (device == NULL || !droce_shim_is_dev(device)) {
		errno = ENODEV;
		return NULL;
	}
	/* DROCE_SHIM_EAGER=1: the runtime (and so the link) comes up with the first context
	 * rather than the first PD or CQ, e.g. before a tool's TCP handshake. */
	if (shim_eager() && droce_shim_rt((struct droce_shim_dev *)device) == NULL)
		return NULL;
	sc = calloc(1, sizeof(*sc));
	if (sc == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(p, O_CLOEXEC) != 0) {
		free(sc);
		return NULL;
	}
	sc->dev = (struct droce_shim_dev *)device;
	sc->async_wfd = p[1];
	v = &sc->vctx;
	v->sz = sizeof(*v); /* verbs_get_ctx_op() checks each op's offset against it */
	v->context.device = device;
	v->context.cmd_fd = -1; /* no kernel uverbs device behind us */
	v->context.async_fd = p[0];
	v->context.num_comp_vectors = 1;
	pthread_mutex_init(&v->context.mutex, NULL);
	v->context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	droce_shim_ctx_ops(v);
	droce_shim_track_ctx(sc, true);
	return &v->context;
}

int
ibv_close_device(struct ibv_context *context)
{
	struct droce_shim_ctx *sc = droce_shim_ctx(context);

	droce_shim_track_ctx(sc, false);
	close(context->async_fd);
	close(sc->async_wfd);
	pthread_mutex_destroy(&context->mutex);
	free(sc);
	return 0;
}

struct droce_shim_channel {
	struct ibv_comp_channel ch;
	int wfd;
};

struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct droce_shim_channel *c = calloc(1, sizeof(*c));
	int p[2];

	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(p, O_CLOEXEC) != 0) {
		free(c);
		return NULL;
	}
	c->ch.context = context;
	c->ch.fd = p[0];
	c->ch.refcnt = 0;
	c->wfd = p[1];
	return &c->ch;
}

int
ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct droce_shim_channel *c = (struct droce_shim_channel *)channel;

	if (channel->refcnt != 0) /* CQs still attached: as the kernel, refuse */
		return droce_shim_fail(EBUSY);
	close(channel->fd);
	close(c->wfd);
	free(c);
	return 0;
}

/* Called where the engine reports a completion on an armed CQ. */
int
droce_shim_cq_notify(struct ibv_cq *cq)
{
	struct droce_shim_channel *c = (struct droce_shim_channel *)cq->channel;

	if (c == NULL)
		return -EINVAL;
	return write(c->wfd, &cq, sizeof(cq)) == (ssize_t)sizeof(cq) ? 0 : -errno;
}

int
ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct ibv_cq *got;
	ssize_t n;

	do { /* an event of a CQ destroyed since is dropped */
		n = read(channel->fd, &got, sizeof(got));
		if (n != (ssize_t)sizeof(got)) {
			if (n >= 0)
				errno = EIO;
			return -1;
		}
	} while (!droce_shim_take_cq_event(got));
	*cq = got;
	*cq_context = got->cq_context;
	return 0;
}

/* ibv_destroy_cq waits on cond until every delivered event is acknowledged. */
void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* Queue an asynchronous event for ibv_get_async_event(). */
int
droce_shim_post_async(struct ibv_context *context, const struct ibv_async_event *ev)
{
	struct droce_shim_ctx *sc = droce_shim_ctx(context);

	return write(sc->async_wfd, ev, sizeof(*ev)) == (ssize_t)sizeof(*ev) ? 0 : -errno;
}

int
ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	ssize_t n;

	do { /* an event of an object destroyed since is dropped */
		n = read(context->async_fd, event, sizeof(*event));
		if (n != (ssize_t)sizeof(*event)) {
			if (n >= 0)
				errno = EIO;
			return -1;
		}
	} while (!droce_shim_take_async_event(event));
	return 0;
}

void
ibv_ack_async_event(struct ibv_async_event *event)
{
	pthread_mutex_t *mutex;
	pthread_cond_t *cond;
	uint32_t *count;

	switch (droce_shim_ev_obj(event->event_type)) {
	case DROCE_SHIM_EV_CQ:
		mutex = &event->element.cq->mutex;
		cond = &event->element.cq->cond;
		count = &event->element.cq->async_events_completed;
		break;
	case DROCE_SHIM_EV_QP:
		mutex = &event->element.qp->mutex;
		cond = &event->element.qp->cond;
		count = &event->element.qp->events_completed;
		break;
	case DROCE_SHIM_EV_SRQ:
		mutex = &event->element.srq->mutex;
		cond = &event->element.srq->cond;
		count = &event->element.srq->events_completed;
		break;
	default: /* port and device events are not counted */
		return;
	}
	pthread_mutex_lock(mutex);
	++*count;
	pthread_cond_signal(cond);
	pthread_mutex_unlock(mutex);
}

/*
 * Provider libraries (libmlx5, libefa: perftest links them) register themselves from their
 * constructors; the shim serves every device itself, so registration is a no-op. The name
 * carries the private ABI number of the installed rdma-core (droce_shim_abi.h).
 */
#define SHIM_CAT2(a, b)	     a##b
#define SHIM_CAT(a, b)	     SHIM_CAT2(a, b)
#define SHIM_REGISTER_DRIVER SHIM_CAT(verbs_register_driver_, DROCE_SHIM_PRIVATE_NUM)

void SHIM_REGISTER_DRIVER(const void *ops);

void
SHIM_REGISTER_DRIVER(const void *ops)
{
	(void)ops;
}

/* No kernel pins our memory: fork needs no madvise(DONTFORK) protection. */
int
ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

int
ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

int
ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}
