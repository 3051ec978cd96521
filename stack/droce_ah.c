/* SPDX-License-Identifier: BSD-3-Clause */
/* Address handles for UD (IBTA 10.2.2): a copy of the address vector, checked once. */
#include <errno.h>

#include "droce_internal.h"

bool
droce_av_same_family(const struct droce_dev *dev, const struct droce_av *av)
{
	return droce_gid_is_v4(dev->attr.gids[av->sgid_index]) == droce_gid_is_v4(av->dgid);
}

struct droce_ah *
droce_ah_create(struct droce_pd *pd, const struct droce_av *av, int *err)
{
	struct droce_dev *dev;
	uint32_t i;

	/* Annex A17: source and destination GIDs are addresses of one IP family. */
	if (pd == NULL || !pd->used || av == NULL || av->sgid_index >= pd->dev->attr.num_gids ||
	    !droce_av_same_family(pd->dev, av)) {
		if (err)
			*err = EINVAL;
		return NULL;
	}
	dev = pd->dev;
	for (i = 0; i < dev->attr.max_ah; i++) {
		if (!dev->ahs[i].used) {
			dev->ahs[i].pd = pd;
			dev->ahs[i].av = *av;
			dev->ahs[i].used = true;
			pd->refs++;
			return &dev->ahs[i];
		}
	}
	if (err)
		*err = ENOMEM;
	return NULL;
}

int
droce_ah_destroy(struct droce_ah *ah)
{
	if (ah == NULL || !ah->used)
		return -EINVAL;
	ah->used = false;
	ah->pd->refs--;
	return 0;
}
