/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A seed replays exactly: the same configuration gives the same run (every counter, the virtual
 * time, the event count), whether it runs alone or after other runs in the same process (no
 * state leaks between runs, in the simulator or in the engine), and another seed differs.
 */
#include <string.h>

#include "droce_test.h"

#include "sim_work.h"

static void
lossy(struct sim_cfg *c, uint64_t seed)
{
	sim_cfg_default(c);
	c->seed = seed;
	c->link.loss = 0.03;
	c->link.dup = 0.01;
	c->link.corrupt = 0.01;
	c->link.reorder = 0.01;
	c->link.jitter_ns = 500;
	c->tx_busy = 0.05;
	c->msgs = 150;
}

static bool
same(const struct sim_summary *a, const struct sim_summary *b)
{
	return a->ok == b->ok && a->msgs == b->msgs && a->bytes == b->bytes &&
	       a->recvs == b->recvs && a->vtime_ns == b->vtime_ns && a->events == b->events &&
	       memcmp(&a->wire, &b->wire, sizeof(a->wire)) == 0 &&
	       memcmp(&a->net, &b->net, sizeof(a->net)) == 0 &&
	       memcmp(a->wc_status, b->wc_status, sizeof(a->wc_status)) == 0 &&
	       strcmp(a->mismatch, b->mismatch) == 0;
}

static void
test_same_seed_same_run(void)
{
	static struct sim_summary first[5], again;
	struct sim_cfg c;
	uint64_t s;

	for (s = 1; s <= 5; s++) {
		lossy(&c, s);
		sim_run(&c, &first[s - 1]);
		CU_ASSERT(first[s - 1].ok);
		CU_ASSERT(first[s - 1].wire.retransmits > 0);
	}
	/* In reverse order, after all the others ran. */
	for (s = 5; s >= 1; s--) {
		lossy(&c, s);
		sim_run(&c, &again);
		CU_ASSERT(same(&first[s - 1], &again));
	}
	CU_ASSERT(!same(&first[0], &first[1]));
}

static void
test_qp_types_replay(void)
{
	static struct sim_summary a, b;
	enum droce_qp_type t[] = { DROCE_QPT_UC, DROCE_QPT_UD };
	struct sim_cfg c;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		lossy(&c, 77);
		c.qpt = t[i];
		sim_run(&c, &a);
		sim_run(&c, &b);
		CU_ASSERT(a.ok);
		CU_ASSERT(same(&a, &b));
	}
}

DROCE_TEST_MAIN("sim_replay", DROCE_TEST(test_same_seed_same_run), DROCE_TEST(test_qp_types_replay))
