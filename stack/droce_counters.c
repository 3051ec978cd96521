/* SPDX-License-Identifier: BSD-3-Clause */
/* Counter names and read-out. Device totals are summed on demand: the data path bumps one
 * per-QP word and nothing else. */

#include "droce_ext.h"
#include "droce_internal.h"

#define DROCE_X_CNT_NAME(e, n) [DROCE_CNT_##e] = n,
static const char *const cnt_names[DROCE_CNT_MAX] = { DROCE_CNT_LIST(DROCE_X_CNT_NAME) };

#define DROCE_X_DROP_CNAME(name, cls, desc) [DROCE_DROP_##name] = "drop_" #name,
static const char *const drop_cnames[DROCE_DROP_MAX] = { DROCE_DROP_LIST(DROCE_X_DROP_CNAME) };

const char *
droce_cnt_name(enum droce_cnt c)
{
	return (unsigned int)c < DROCE_CNT_MAX ? cnt_names[c] : "?";
}

uint64_t
droce_qp_counter(const struct droce_qp *qp, enum droce_cnt c)
{
	return (unsigned int)c < DROCE_CNT_MAX ? qp->cnt[c] : 0;
}

uint64_t
droce_dev_counter(const struct droce_dev *dev, enum droce_cnt c)
{
	uint64_t v;
	int64_t i;

	if ((unsigned int)c >= DROCE_CNT_MAX)
		return 0;
	v = dev->cnt_gone[c];
	for (i = droce_qp_slot_next(dev, 0); i >= 0; i = droce_qp_slot_next(dev, (uint32_t)i + 1))
		v += dev->qps[i].cnt[c];
	return v;
}

uint64_t
droce_dev_drops(const struct droce_dev *dev, unsigned int reason)
{
	return reason < DROCE_DROP_MAX ? dev->drops.cnt[reason] : 0;
}

unsigned int
droce_qp_counters(const struct droce_qp *qp, struct droce_counter *out, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < DROCE_CNT_MAX && i < n; i++) {
		out[i].name = cnt_names[i];
		out[i].value = qp->cnt[i];
	}
	return DROCE_CNT_MAX;
}

unsigned int
droce_dev_counters(const struct droce_dev *dev, struct droce_counter *out, unsigned int n)
{
	unsigned int i, k = 0;

	for (i = 0; i < DROCE_CNT_MAX; i++, k++) {
		if (k < n) {
			out[k].name = cnt_names[i];
			out[k].value = droce_dev_counter(dev, (enum droce_cnt)i);
		}
	}
	/* drop_NONE would be "accepted frames": listed as rcvd_roce_frames instead */
	for (i = 0; i < DROCE_DROP_MAX; i++, k++) {
		if (k < n) {
			out[k].name = i == DROCE_DROP_NONE ? "rcvd_roce_frames" : drop_cnames[i];
			out[k].value = dev->drops.cnt[i];
		}
	}
	return k;
}

enum droce_mtu
droce_dev_active_mtu(const struct droce_dev *dev)
{
	return (enum droce_mtu)dev->active_mtu;
}

uint64_t
droce_dev_events_lost(const struct droce_dev *dev)
{
	return dev->ev_lost;
}
